/* LD_PRELOAD shim for tests/cli/safety.rs: fdatasync(2) number EIO_ON_FDATASYNC (1-based, counted
 * over the whole process) fails with EIO, as a failing disk reports a lost write-back; every other
 * call goes to the real one. Built by the test with `gcc -shared -fPIC`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

static int calls;

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int n = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    const char *at = getenv("EIO_ON_FDATASYNC");
    if (at && n == atoi(at)) {
        errno = EIO;
        return -1;
    }
    return real(fd);
}
