#!/usr/bin/env bash
# The tools, resources, prompts and completions the official MCP
# conformance suite (@modelcontextprotocol/conformance) looks for, written
# as plain bash functions (declared in tools.json, resources.json and
# prompts.json). Serve it over Streamable HTTP:
#
#   mcp-bashd --http examples/conformance/server.sh
#
# tests/conformance/run.sh does that and runs the suite against it. The
# mcp_* helpers (mcp_progress, mcp_log, mcp_text, mcp_image, mcp_audio,
# mcp_resource) come from mcp-bashd's shim, which the daemon loads before
# this file; they reach the daemon through files private to the call, so
# stdout stays the plain-text result.

# conformance_png FILE — a 1x1 red PNG (the suite's "minimal test image").
conformance_png() {
    printf '\x89PNG\r\n\x1a\n'
    printf '\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90\x77\x53\xde'
    printf '\x00\x00\x00\x0cIDAT\x08\xd7\x63\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\x18\xdd\x8d\xb0'
    printf '\x00\x00\x00\x00IEND\xae\x42\x60\x82'
}

# conformance_wav — 8 samples of silence: 8 kHz, mono, 8-bit PCM.
conformance_wav() {
    printf 'RIFF\x2c\x00\x00\x00WAVE'
    printf 'fmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x40\x1f\x00\x00\x01\x00\x08\x00'
    printf 'data\x08\x00\x00\x00\x80\x80\x80\x80\x80\x80\x80\x80'
}

# conformance_pause — the ~50 ms the suite asks for between notifications,
# so a client sees them arrive while the call runs.
conformance_pause() {
    sleep 0.05
}

tool_test_simple_text() {
    printf 'This is a simple text response for testing.\n'
}

tool_test_image_content() {
    local png="$MCP_CALL_TMPDIR/red.png"
    conformance_png >"$png"
    mcp_image "$png" image/png
}

tool_test_audio_content() {
    local wav="$MCP_CALL_TMPDIR/silence.wav"
    conformance_wav >"$wav"
    mcp_audio "$wav" audio/wav
}

tool_test_embedded_resource() {
    mcp_resource test://embedded-resource text/plain 'This is an embedded resource content.'
}

tool_test_multiple_content_types() {
    local png="$MCP_CALL_TMPDIR/red.png"
    conformance_png >"$png"
    mcp_text 'Multiple content types test:'
    mcp_image "$png" image/png
    mcp_resource test://mixed-content-resource application/json '{"test":"data","value":123}'
}

tool_test_error_handling() {
    printf 'This tool intentionally returns an error for testing\n'
    return 1
}

tool_test_tool_with_progress() {
    mcp_progress 0 100
    conformance_pause
    mcp_progress 50 100
    conformance_pause
    mcp_progress 100 100
    printf 'Progress test completed\n'
}

tool_test_tool_with_logging() {
    mcp_log info 'Tool execution started'
    conformance_pause
    mcp_log info 'Tool processing data'
    conformance_pause
    mcp_log info 'Tool execution completed'
    printf 'Logging test completed\n'
}

# 2026-07-28: log notifications only reach a client whose request carried
# _meta io.modelcontextprotocol/logLevel; mcp-bashd drops them otherwise.
tool_test_logging_tool() {
    mcp_log debug 'test_logging_tool: debug'
    mcp_log info 'test_logging_tool: info'
    mcp_log warning 'test_logging_tool: warning'
    printf 'Logged at debug, info and warning\n'
}

# Declared in tools.json as needing the client's sampling capability: a
# 2026-07-28 request whose _meta clientCapabilities lack it gets -32021
# from mcp-bashd before this runs.
tool_test_missing_capability() {
    printf 'The client declared the sampling capability.\n'
}

# Needs the client's elicitation capability (tools.json). A 2026-07-28
# server never sends requests on a request's response stream: this tool
# streams progress notifications and then its result, nothing else.
tool_test_streaming_elicitation() {
    mcp_progress 1 3 'streaming'
    conformance_pause
    mcp_progress 2 3 'streaming'
    conformance_pause
    mcp_progress 3 3 'done'
    printf 'Streamed progress, then this result; no request was sent on the stream.\n'
}

# Its inputSchema carries JSON Schema 2020-12 keywords the suite checks
# survive tools/list unchanged; the arguments are validated against it.
tool_json_schema_2020_12_tool() {
    printf '%s\n' "$1"
}

# Its region argument is marked x-mcp-header in tools.json: a 2026-07-28
# client mirrors it in an Mcp-Param-Region header, which mcp-bashd checks
# against the body before the call runs.
tool_test_header_param() {
    local re='"region"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $1 =~ $re ]] && printf 'region: %s\n' "${BASH_REMATCH[1]}"
}

# ---- tools that ask the client: 2026-07-28 MRTR (input_required) ----
# In 2026-07-28 an ask ends the call with an input_required result; the
# client answers with inputResponses and the tool runs again from the
# start, its asks answered this time. mcp_ask_all names each request's key
# (the suite looks for these names); mcp_elicit, mcp_sample and mcp_roots
# key theirs by content. Nothing here runs twice that may not.

conformance_name_schema='{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'

# conformance_ask KEY METHOD PARAMS — one request under KEY; prints the
# client's result for it.
conformance_ask() {
    local answers
    answers=$(mcp_ask_all "{\"$1\":{\"method\":\"$2\",\"params\":$3}}") || return
    printf '%s' "$answers"
}

tool_test_input_required_result_elicitation() {
    local answer
    answer=$(conformance_ask user_name elicitation/create \
        "{\"message\":\"What is your name?\",\"requestedSchema\":$conformance_name_schema}") || return
    printf 'Hello, %s!\n' "$(conformance_field name "$answer")"
}

tool_test_input_required_result_sampling() {
    local answer
    answer=$(conformance_ask capital_question sampling/createMessage \
        '{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}') || return
    printf 'The model said: %s\n' "$(conformance_field text "$answer")"
}

tool_test_input_required_result_list_roots() {
    local answer
    answer=$(conformance_ask client_roots roots/list '{}') || return
    printf 'The client shares the root %s\n' "$(conformance_field uri "$answer")"
}

tool_test_input_required_result_request_state() {
    conformance_ask confirm elicitation/create \
        '{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}' >/dev/null || return
    # mcp-bashd checked the requestState's signature before this re-run.
    printf 'state-ok: confirmed\n'
}

tool_test_input_required_result_tampered_state() {
    tool_test_input_required_result_request_state
}

tool_test_input_required_result_multiple_inputs() {
    local answers
    answers=$(mcp_ask_all "{
        \"user_name\": {\"method\": \"elicitation/create\", \"params\": {\"message\": \"What is your name?\", \"requestedSchema\": $conformance_name_schema}},
        \"greeting\": {\"method\": \"sampling/createMessage\", \"params\": {\"messages\": [{\"role\": \"user\", \"content\": {\"type\": \"text\", \"text\": \"Generate a greeting\"}}], \"maxTokens\": 50}},
        \"client_roots\": {\"method\": \"roots/list\", \"params\": {}}
    }") || return
    printf '%s, %s (root %s)\n' "$(conformance_field text "$answers")" \
        "$(conformance_field name "$answers")" "$(conformance_field uri "$answers")"
}

tool_test_input_required_result_multi_round() {
    local name color
    name=$(conformance_ask step1 elicitation/create \
        "{\"message\":\"Step 1: What is your name?\",\"requestedSchema\":$conformance_name_schema}") || return
    color=$(conformance_ask step2 elicitation/create \
        '{"message":"Step 2: What is your favorite color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}') || return
    printf '%s likes %s.\n' "$(conformance_field name "$name")" "$(conformance_field color "$color")"
}

# The client's capabilities decide what it can be asked: this request
# declares sampling only, so the elicitation fails at once (mcp_ask_all
# returns non-zero) and the tool asks the model instead.
tool_test_input_required_result_capabilities() {
    local answer
    if answer=$(conformance_ask user_name elicitation/create \
        "{\"message\":\"What is your name?\",\"requestedSchema\":$conformance_name_schema}" 2>/dev/null); then
        printf 'Hello, %s!\n' "$(conformance_field name "$answer")"
        return
    fi
    answer=$(conformance_ask name_guess sampling/createMessage \
        '{"messages":[{"role":"user","content":{"type":"text","text":"Suggest a name"}}],"maxTokens":20}') || return
    printf 'Hello, %s!\n' "$(conformance_field text "$answer")"
}

# prompts/get can ask too (prompts.json).
prompt_test_input_required_result_prompt() {
    local answer
    answer=$(conformance_ask user_context elicitation/create \
        '{"message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}') || return
    printf 'Answer with this context in mind: %s\n' "$(conformance_field context "$answer")"
}

# ---- tools that ask the client (session eras: a request on the call's
# stream; mcp_ask, mcp_elicit and mcp_sample come from the shim) ----

# conformance_string NAME JSON — the JSON-escaped text of string argument
# NAME, as it appears in the arguments: ready to be pasted into JSON.
conformance_string() {
    local re='"'"$1"'"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
    [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}

tool_test_elicitation() {
    local message answer
    message=$(conformance_string message "$1")
    answer=$(mcp_ask elicitation/create '{"message":"'"$message"'","requestedSchema":{"type":"object","properties":{"username":{"type":"string","description":"User'"'"'s response"},"email":{"type":"string","description":"User'"'"'s email address"}},"required":["username","email"]}}') || return
    printf 'User response: %s\n' "$answer"
}

tool_test_sampling() {
    local prompt result re='"text"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
    prompt=$(conformance_string prompt "$1")
    result=$(mcp_sample '{"messages":[{"role":"user","content":{"type":"text","text":"'"$prompt"'"}}],"maxTokens":100}') || return
    [[ $result =~ $re ]] || { printf 'The client answered without text: %s\n' "$result"; return 1; }
    printf 'LLM response: %s\n' "${BASH_REMATCH[1]}"
}

# mcp_elicit returns 1 when the user declines or cancels, but prints the
# answer all the same: the result reports whatever came back.
tool_test_elicitation_sep1034_defaults() {
    local answer
    answer=$(mcp_elicit 'Test client default value handling - please accept with defaults' '{"type":"object","properties":{
        "name":{"type":"string","description":"User name","default":"John Doe"},
        "age":{"type":"integer","description":"User age","default":30},
        "score":{"type":"number","description":"User score","default":95.5},
        "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
        "verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}')
    [ -n "$answer" ] || return 1
    printf 'Elicitation completed: %s\n' "$answer"
}

tool_test_elicitation_sep1330_enums() {
    local answer
    answer=$(mcp_elicit 'Pick from each kind of enum' '{"type":"object","properties":{
        "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
        "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
        "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
        "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
        "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}')
    [ -n "$answer" ] || return 1
    printf 'Elicitation completed: %s\n' "$answer"
}

# ---- resources, prompts and completion (resources.json, prompts.json) ----
# A resource_NAME function prints the resource's text (or bytes: output that
# is not UTF-8 is sent as a blob); $1 is the URI, $2 a template's variables
# as a JSON object. A prompt_NAME function prints one user message; $1 holds
# its arguments as a JSON object, and mcp_message adds messages of any role.

# conformance_field NAME JSON — the string value of a flat JSON member.
conformance_field() {
    local re="\"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\""
    [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}

resource_static_text() {
    printf 'This is the content of the static text resource.'
}

resource_static_binary() {
    conformance_png
}

resource_watched_resource() {
    printf 'Watched resource content.'
}

resource_template_data() {
    local id
    id=$(conformance_field id "$2")
    printf '{"id":"%s","templateTest":true,"data":"Data for ID: %s"}' "$id" "$id"
}

tool_test_update_watched_resource() {
    mcp_resource_updated test://watched-resource
    printf 'Subscribers of test://watched-resource were told it changed.\n'
}

prompt_test_simple_prompt() {
    printf 'This is a simple prompt for testing.\n'
}

prompt_test_prompt_with_arguments() {
    printf "Prompt with arguments: arg1='%s', arg2='%s'\n" "$(conformance_field arg1 "$1")" "$(conformance_field arg2 "$1")"
}

prompt_test_prompt_with_embedded_resource() {
    mcp_message user --resource "$(conformance_field resourceUri "$1")" text/plain 'Embedded resource content for testing.'
    printf 'Please process the embedded resource above.\n'
}

prompt_test_prompt_with_image() {
    local png="$MCP_CALL_TMPDIR/red.png"
    conformance_png >"$png"
    mcp_message user --image "$png" image/png
    printf 'Please analyze the image above.\n'
}

# complete_NAME ARGUMENT VALUE CONTEXT_JSON — one candidate per line.
complete_test_prompt_with_arguments() {
    local v
    for v in paris park party testValue1 testValue2; do
        case $v in "$2"*) printf '%s\n' "$v" ;; esac
    done
}

complete_template_data() {
    local v
    for v in 123 456 789; do
        case $v in "$2"*) printf '%s\n' "$v" ;; esac
    done
}

# The 2026-07-28 suite asks for a change of the prompt list while it
# listens (subscriptions/listen with promptsListChanged). This adds or
# removes a prompt in MCP_PROMPTS_FILE, which must be a copy of
# prompts.json (tests/conformance/run.sh makes one); mcp-bashd sees the
# edit and tells the listening clients.
tool_test_trigger_prompt_change() {
    local f=${MCP_PROMPTS_FILE:-} json
    local entry='{ "name": "test_dynamic_prompt", "description": "Added and removed by test_trigger_prompt_change." },'
    if [ -z "$f" ] || [ "$f" -ef "$(dirname "$0")/prompts.json" ]; then
        printf 'Set MCP_PROMPTS_FILE to a copy of prompts.json: this tool edits it.\n'
        return 1
    fi
    json=$(<"$f")
    case $json in
    *"$entry"*) json=${json/"$entry"/} ;;
    *) json='{ "prompts": ['"$entry${json#*'"prompts": ['}" ;;
    esac
    printf '%s\n' "$json" >"$f.new" && mv -f "$f.new" "$f"
    printf 'The prompt list changed.\n'
}

# ---- tasks (the 2026-07-28 io.modelcontextprotocol/tasks extension) ----
# tools.json marks these tools with x-mcp-bashd "task": for a client whose
# request declares the extension, mcp-bashd answers the call at once with a
# task and the function below keeps running in its own process group;
# tasks/get reports it (mcp_progress becomes its statusMessage) and, once
# it returned, its result. An mcp_elicit inside a task parks it in
# input_required until tasks/update brings the answer.

# conformance_number NAME JSON — the number value of a flat JSON member.
conformance_number() {
    local re="\"$1\"[[:space:]]*:[[:space:]]*([0-9]+(\\.[0-9]+)?)"
    [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}

tool_greet() {
    printf 'Hello, %s!' "$(conformance_field name "$1")"
}

# slow_compute {seconds, label}: a task (optional) that sleeps, then answers.
tool_slow_compute() {
    local seconds label
    seconds=$(conformance_number seconds "$1")
    label=$(conformance_field label "$1")
    mcp_progress 0 1 "computing ${label:-}"
    sleep "${seconds:-0}"
    printf 'Computed %s after %s seconds.\n' "${label:-}" "${seconds:-0}"
}

# failing_job: a task (required) whose tool reports an error: the task
# completes with isError (a tool error is not a failed task).
tool_failing_job() {
    printf 'The job failed.\n'
    return 1
}

# protocol_error_job: the tool's shell dies by a signal, so the call has no
# result at all: the task ends failed, with an error object.
tool_protocol_error_job() {
    kill -KILL $$
}

# confirm_delete {filename}: asks the user, then answers (the task waits in
# input_required meanwhile).
tool_confirm_delete() {
    local file answer
    file=$(conformance_field filename "$1")
    answer=$(mcp_elicit "Delete $file?" '{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}') || {
        printf 'Kept %s.\n' "$file"
        return 0
    }
    case $answer in
    *'"confirm":true'*) printf 'Deleted %s.\n' "$file" ;;
    *) printf 'Kept %s.\n' "$file" ;;
    esac
}

# multi_input: two elicitations at once (one input_required with two keys).
tool_multi_input() {
    local answers
    answers=$(mcp_ask_all '{
        "first": {"method": "elicitation/create", "params": {"message": "First input?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
        "second": {"method": "elicitation/create", "params": {"message": "Second input?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    }') || return
    printf 'Got both inputs: %s\n' "$answers"
}

# test_tool_with_task: x-mcp-bashd "taskAfterInput" — the call gathers the
# user's name synchronously (input_required, as the MRTR tools above), and
# the retry that brings it becomes a task, whose result names the user.
tool_test_tool_with_task() {
    local answer
    answer=$(conformance_ask user_name elicitation/create \
        "{\"message\":\"What is your name?\",\"requestedSchema\":$conformance_name_schema}") || return
    printf 'Task done for %s.\n' "$(conformance_field name "$answer")"
}
