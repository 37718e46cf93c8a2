/* errbuf.h — the two small helpers every common/ module used to copy: formatting one
 * error line into a caller's buffer, and writing a whole buffer to a file descriptor.
 * No allocation; safe from any thread. */
#ifndef ARGUS_COMMON_ERRBUF_H
#define ARGUS_COMMON_ERRBUF_H

#include <stddef.h>

/* printf into errbuf[errlen]; does nothing when errbuf is NULL or errlen is 0. */
void argus_seterr(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* write(2) all of data, retrying on EINTR and short writes. 0 or negative errno. */
int argus_write_all(int fd, const void *data, size_t len);

#endif /* ARGUS_COMMON_ERRBUF_H */
