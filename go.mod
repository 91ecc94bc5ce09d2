module github.com/mcp-bashd/mcp-bashd

go 1.26.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.uber.org/zap v1.28.0
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.14.0
)

require (
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
)
