/*
 * An open-loop HTTP/1.1 load generator for the `serve` benchmark's latency rows (bench/serve_bench.py --paced).
 *
 * wrk keeps a fixed number of requests in flight (a closed loop), and its Lua delay() counts whole milliseconds,
 * so a "paced" wrk sends the requests of each millisecond together and measures its own bursts as much as the
 * server. This client instead draws request times from a Poisson process at RATE requests/s, fixed in advance,
 * and measures each answer from the time its request was due, not from when it could be sent: when every
 * connection is busy, due requests wait in a queue and the wait counts (no coordinated omission). Times are
 * taken with CLOCK_MONOTONIC in nanoseconds; the loop spins when the next request is due within a millisecond.
 *
 * usage: paced_client PORT PATH TOKENS_FILE RATE SECONDS CONNECTIONS
 *   Sends `GET PATH` to 127.0.0.1:PORT with `Authorization: Bearer <token>`, the tokens of TOKENS_FILE (one a
 *   line) in turn, for one second of warm-up and then SECONDS measured seconds.
 * prints: PACED requests duration_us non2xx errors p50_us p90_us p99_us p999_us max_us backlog_max answered
 *   (requests and latencies of the measured seconds; backlog_max: the most due requests that waited for a
 *   connection at once; answered: every answer, warm-up included, for the server's CPU per request).
 *   Exit status 1 on a usage or connection error.
 * With PACED_SLOW_US=N in the environment, every measured answer slower than N µs is also written to standard
 * error with the time its request was due (ms after the measurement began), to see whether stalls recur.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RECEIVE_BYTES 65536
#define QUEUE_SLOTS (1 << 20)

typedef struct {
    int fd;
    int busy;
    uint64_t due;          /* when the request in flight was due */
    size_t received;
    char buffer[RECEIVE_BYTES];
} connection;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* xorshift64*: a fixed sequence, so runs are repeatable. */
static uint64_t state = 0x9E3779B97F4A7C15u;
static double uniform(void) {
    state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
    return ((state * 2685821657736338717u) >> 11) * (1.0 / 9007199254740992.0);
}

static int open_connection(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { close(fd); return -1; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Whether buffer holds one whole answer: its head and Content-Length bytes of body. Sets *status. */
static int complete(const char *buffer, size_t size, int *status) {
    const char *end = memmem(buffer, size, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t head = (size_t)(end - buffer) + 4;
    long body = 0;
    for (const char *line = buffer; line < end; ) {
        const char *next = memmem(line, (size_t)(end - line), "\r\n", 2);
        if (!next) next = end;
        if ((size_t)(next - line) > 15 && strncasecmp(line, "content-length:", 15) == 0) body = strtol(line + 15, NULL, 10);
        line = next + 2;
    }
    if (size < head + (size_t)body) return 0;
    *status = size > 12 ? atoi(buffer + 9) : 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: paced_client PORT PATH TOKENS_FILE RATE SECONDS CONNECTIONS\n");
        return 1;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    double rate = atof(argv[4]);
    double seconds = atof(argv[5]);
    int count = atoi(argv[6]);
    if (port <= 0 || rate <= 0 || seconds <= 0 || count <= 0) { fprintf(stderr, "error: bad arguments\n"); return 1; }

    FILE *file = fopen(argv[3], "r");
    if (!file) { fprintf(stderr, "error: cannot read %s\n", argv[3]); return 1; }
    size_t tokens = 0, capacity = 1024;
    char **requests = malloc(capacity * sizeof *requests);
    size_t *lengths = malloc(capacity * sizeof *lengths);
    char *line = NULL;
    size_t line_capacity = 0;
    ssize_t got;
    while ((got = getline(&line, &line_capacity, file)) > 0) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r')) line[--got] = 0;
        if (got == 0) continue;
        if (tokens == capacity) {
            capacity *= 2;
            requests = realloc(requests, capacity * sizeof *requests);
            lengths = realloc(lengths, capacity * sizeof *lengths);
        }
        int n = asprintf(&requests[tokens], "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n",
                         path, port, line);
        if (n < 0) return 1;
        lengths[tokens++] = (size_t)n;
    }
    fclose(file);
    if (tokens == 0) { fprintf(stderr, "error: no tokens in %s\n", argv[3]); return 1; }

    int poll = epoll_create1(0);
    connection *connections = calloc((size_t)count, sizeof *connections);
    int *idle = malloc((size_t)count * sizeof *idle), idle_count = 0;
    for (int i = 0; i < count; i++) {
        connections[i].fd = open_connection(port);
        if (connections[i].fd < 0) { fprintf(stderr, "error: cannot connect to 127.0.0.1:%d: %s\n", port, strerror(errno)); return 1; }
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(poll, EPOLL_CTL_ADD, connections[i].fd, &event);
        idle[idle_count++] = i;
    }

    uint64_t *queue = malloc(QUEUE_SLOTS * sizeof *queue);     /* due times waiting for a connection */
    size_t head = 0, tail = 0, backlog_max = 0;
    size_t latency_capacity = (size_t)(rate * (seconds + 2)) + 1024, latency_count = 0;
    uint64_t *latencies = malloc(latency_capacity * sizeof *latencies);
    uint64_t non2xx = 0, errors = 0, next_token = 0, answered = 0;
    const char *slow_text = getenv("PACED_SLOW_US");
    uint64_t slow_ns = slow_text ? (uint64_t)atoll(slow_text) * 1000u : UINT64_MAX;

    uint64_t start = now_ns();
    uint64_t measured = start + 1000000000u;                   /* one second of warm-up */
    uint64_t stop = measured + (uint64_t)(seconds * 1e9);
    double next_due = (double)start;
    struct epoll_event events[256];

    for (;;) {
        uint64_t now = now_ns();
        while (next_due <= (double)now && next_due < (double)stop) {
            if (tail - head == QUEUE_SLOTS) { fprintf(stderr, "error: more than %d requests waiting\n", QUEUE_SLOTS); return 1; }
            queue[tail++ % QUEUE_SLOTS] = (uint64_t)next_due;
            next_due += -log(1.0 - uniform()) / rate * 1e9;
        }
        if (tail - head > backlog_max && now >= measured) backlog_max = tail - head;
        while (head != tail && idle_count > 0) {
            connection *c = &connections[idle[--idle_count]];
            size_t index = next_token++ % tokens;
            if (send(c->fd, requests[index], lengths[index], MSG_NOSIGNAL) != (ssize_t)lengths[index]) {
                fprintf(stderr, "error: send: %s\n", strerror(errno));
                return 1;
            }
            c->busy = 1;
            c->due = queue[head++ % QUEUE_SLOTS];
            c->received = 0;
        }
        if (now >= stop && idle_count == count) break;
        if (now >= stop + 2000000000u) { errors += (uint64_t)(count - idle_count); break; }
        int timeout = 0;
        if (next_due >= (double)stop) timeout = 10;
        else if (next_due - (double)now > 2e6) timeout = (int)((next_due - (double)now) / 1e6) - 1;
        int ready = epoll_wait(poll, events, 256, timeout);
        uint64_t at = now_ns();
        for (int e = 0; e < ready; e++) {
            int i = (int)events[e].data.u32;
            connection *c = &connections[i];
            ssize_t n = recv(c->fd, c->buffer + c->received, RECEIVE_BYTES - c->received, 0);
            if (n <= 0 || !c->busy) {
                fprintf(stderr, "error: connection %d: %s\n", i, n < 0 ? strerror(errno) : "closed or unasked bytes");
                return 1;
            }
            c->received += (size_t)n;
            int status = 0;
            if (!complete(c->buffer, c->received, &status)) {
                if (c->received == RECEIVE_BYTES) { fprintf(stderr, "error: an answer over %d bytes\n", RECEIVE_BYTES); return 1; }
                continue;
            }
            if (c->due >= measured && c->due < stop) {
                if (latency_count < latency_capacity) latencies[latency_count++] = at - c->due;
                if (at - c->due > slow_ns)
                    fprintf(stderr, "slow: due at %.3f ms, answered after %llu us\n", (double)(c->due - measured) / 1e6,
                            (unsigned long long)((at - c->due) / 1000));
                if (status < 200 || status > 299) non2xx++;
            }
            answered++;
            c->busy = 0;
            idle[idle_count++] = i;
        }
    }

    if (latency_count == 0) { fprintf(stderr, "error: no answers\n"); return 1; }
    qsort(latencies, latency_count, sizeof *latencies, compare);
#define AT(q) (latencies[(size_t)((q) * (double)(latency_count - 1))] / 1000)
    printf("PACED %zu %llu %llu %llu %llu %llu %llu %llu %llu %zu %llu\n", latency_count,
           (unsigned long long)((stop - measured) / 1000), (unsigned long long)non2xx, (unsigned long long)errors,
           (unsigned long long)AT(0.50), (unsigned long long)AT(0.90), (unsigned long long)AT(0.99),
           (unsigned long long)AT(0.999), (unsigned long long)(latencies[latency_count - 1] / 1000), backlog_max,
           (unsigned long long)answered);
    return 0;
}
