package runner_test

import (
	"runtime"
	"strconv"
)

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

var sink any

func keep(v any) { sink = v; runtime.KeepAlive(v) }

func itoa(i int) string { return strconv.Itoa(i) }
