// Command child is the process the tests of package procquiet watch.
//
//	child spin          busy-loop forever
//	child stdin         print "ready", then for each line "work MS" read
//	                    from stdin compute for MS ms and print "done"
//	child dial ADDR     connect to ADDR, print "connected", block on stdin
//	child listen ADDR   listen on ADDR, print the port, accept one
//	                    connection, print "accepted", block on stdin
//	child threads N     lock goroutines to new threads until the process
//	                    has at least N threads, print their number, then
//	                    for each line +K or -K read from stdin start K more
//	                    locked goroutines or end K (their threads exit)
//	                    and print "ok"
package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: child spin|stdin|dial ADDR|listen ADDR"))
	}
	switch os.Args[1] {
	case "spin":
		x := 0
		for {
			x++
		}
	case "stdin":
		fmt.Println("ready")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			ms := must(strconv.Atoi(strings.TrimPrefix(sc.Text(), "work ")))
			sum := sha256.Sum256(nil)
			for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
				for range 1000 {
					sum = sha256.Sum256(sum[:])
				}
			}
			fmt.Printf("done %x\n", sum[:4])
		}
	case "dial":
		hold(must(net.Dial("tcp", os.Args[2])), "connected")
	case "listen":
		l := must(net.Listen("tcp", os.Args[2]))
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		hold(must(l.Accept()), "accepted")
	case "threads":
		n := must(strconv.Atoi(os.Args[2]))
		var stops []chan struct{}
		for threads() < n {
			stops = append(stops, lockedThread())
		}
		fmt.Println(threads())
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			k := must(strconv.Atoi(sc.Text()))
			for ; k > 0; k-- {
				stops = append(stops, lockedThread())
			}
			for ; k < 0 && len(stops) > 0; k++ {
				close(stops[len(stops)-1])
				stops = stops[:len(stops)-1]
			}
			fmt.Println("ok")
		}
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
}

// lockedThread starts a goroutine locked to its thread, which exits with
// the thread when the channel returned is closed.
func lockedThread() chan struct{} {
	stop, started := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with it
		close(started)
		<-stop
	}()
	<-started
	return stop
}

// threads returns the number of threads of this process.
func threads() int {
	return len(must(os.ReadDir("/proc/self/task")))
}

// hold prints said, then keeps c open until stdin ends.
func hold(c net.Conn, said string) {
	defer c.Close()
	fmt.Println(said)
	io.Copy(io.Discard, os.Stdin)
}

// must returns v, or ends the child on err.
func must[T any](v T, err error) T {
	if err != nil {
		fail(err)
	}
	return v
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "child:", err)
	os.Exit(2)
}
