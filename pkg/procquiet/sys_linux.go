//go:build linux

package procquiet

import (
	"encoding/binary"
	"syscall"
	"unsafe"
)

// The functions of this file make system calls without allocating: the
// syscall and os packages copy every path string to a new NUL-terminated
// buffer, and os.File registers with the poller.

// openat opens path, which must end with a NUL byte, relative to dirfd
// (atFDCWD for the working directory), read-only and close-on-exec.
func openat(dirfd int, path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, syscall.EINVAL
	}
	for {
		fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd),
			uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags|syscall.O_RDONLY|syscall.O_CLOEXEC), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case syscall.EINTR:
			continue
		}
		return -1, errno
	}
}

const atFDCWD = -0x64 // AT_FDCWD

// preadAll reads a /proc file from offset 0 into buf, growing it until
// the whole file fits, and returns the bytes read and the buffer to keep.
// Reading a seq_file (/proc/PID/stat, schedstat) from offset 0
// regenerates its contents.
func preadAll(fd int, buf []byte) (data, keep []byte, err error) {
	if cap(buf) < 1024 {
		buf = make([]byte, 1024)
	}
	buf = buf[:cap(buf)]
	for {
		n, err := syscall.Pread(fd, buf, 0)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, buf, err
		case n == len(buf):
			buf = make([]byte, 2*len(buf))
			continue
		}
		return buf[:n], buf, nil
	}
}

// nextDirent returns the first linux_dirent64 record of buf and the rest:
//
//	u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[] (NUL-terminated)
func nextDirent(buf []byte) (name, rest []byte, ok bool) {
	const nameOff = 19
	if len(buf) < nameOff {
		return nil, nil, false
	}
	reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
	if reclen < nameOff || reclen > len(buf) {
		return nil, nil, false
	}
	name = buf[nameOff:reclen]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	return name, buf[reclen:], true
}

// readlinkat reads the target of link path (NUL-terminated) relative to
// dirfd into buf and returns its length (truncated to len(buf)).
func readlinkat(dirfd int, path, buf []byte) (int, error) {
	for {
		n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd),
			uintptr(unsafe.Pointer(&path[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, errno
	}
}
