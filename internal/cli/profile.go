package cli

import (
	"os"
	"os/signal"
	"runtime/pprof"
)

// ProfileCPU starts a Go CPU profile into path ("" does nothing) and
// returns the function that writes it out. An interrupt (Ctrl-C) writes
// the profile before the process exits with 130: a long training is often
// profiled for a few minutes and then stopped (it resumes from its
// checkpoint next time).
func ProfileCPU(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		return nil, err
	}
	stop = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		<-sig
		stop()
		os.Exit(130)
	}()
	return stop, nil
}
