//go:build linux && !portable

package supervisor

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// $$ of a forked warm process (zygote_linux.go): bash keeps it in its
// exported global dollar_dollar_pid, found here and written through
// /proc/PID/mem.

// bashSym is where a bash binary keeps $$: dollar_dollar_pid's value
// (its address before relocation) and the ELF entry point.
type bashSym struct {
	value, entry uint64
	err          error
}

var bashSyms sync.Map // bash path → *bashSym

// dollarSymbol reads bash's dollar_dollar_pid from its symbol tables,
// once per path.
func dollarSymbol(path string) *bashSym {
	if v, ok := bashSyms.Load(path); ok {
		return v.(*bashSym)
	}
	b := &bashSym{err: errNoDollar}
	if f, err := elf.Open(path); err != nil {
		b.err = fmt.Errorf("%w: %v", errNoDollar, err)
	} else {
		b.entry = f.Entry
		for _, read := range []func() ([]elf.Symbol, error){f.DynamicSymbols, f.Symbols} {
			syms, _ := read()
			for _, sym := range syms {
				if sym.Name == "dollar_dollar_pid" && sym.Size == 4 && sym.Value != 0 {
					b.value, b.err = sym.Value, nil
					break
				}
			}
			if b.err == nil {
				break
			}
		}
		f.Close()
	}
	v, _ := bashSyms.LoadOrStore(path, b)
	return v.(*bashSym)
}

// atEntry is AT_ENTRY (linux/auxvec.h).
const atEntry = 9

// errNoDollar: this bash's $$ cannot be found (no symbol, an unreadable
// binary, an address that does not hold the zygote's pid), for good.
var errNoDollar = errors.New("no dollar_dollar_pid in bash")

// readPid reads the int32 at addr of the process whose mem is fd.
func readPid(fd int, addr int64) (int, error) {
	var b [4]byte
	if n, err := unix.Pread(fd, b[:], addr); err != nil || n != 4 {
		return 0, fmt.Errorf("read $$: %v", err)
	}
	return int(int32(binary.NativeEndian.Uint32(b[:]))), nil
}

// findDollar sets z.dollar: dollar_dollar_pid's address in the zygote,
// checked to hold its pid.
func (z *zygote) findDollar() error {
	sym := dollarSymbol(z.exe)
	if sym.err != nil {
		return fmt.Errorf("%s: %w", z.exe, sym.err)
	}
	proc := "/proc/" + strconv.Itoa(z.pid)
	entry := auxvValue(proc, atEntry)
	if entry == 0 {
		return errors.New("no AT_ENTRY in " + proc + "/auxv")
	}
	addr := int64(entry - sym.entry + sym.value)
	fd, err := unix.Open(proc+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	got, err := readPid(fd, addr)
	if err != nil {
		return err
	}
	if got != z.pid {
		return fmt.Errorf("%w: it holds %d, not the zygote's pid %d", errNoDollar, got, z.pid)
	}
	z.dollar = addr
	return nil
}

// setDollar writes w's pid into its $$ through mem (w's /proc/PID/mem,
// opened while w is registered), after checking the zygote's is there.
func (z *zygote) setDollar(mem int, pid int) error {
	got, err := readPid(mem, z.dollar)
	if err != nil {
		return err
	}
	if got != z.pid {
		return fmt.Errorf("%w: $$ holds %d, not the zygote's %d", errNoArgv, got, z.pid)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(int32(pid)))
	if n, err := unix.Pwrite(mem, b[:], z.dollar); err != nil || n != 4 {
		return fmt.Errorf("%w: write $$: %v", errNoArgv, err)
	}
	return nil
}
