/*
 * outpost-icmp: the agent's persistent ICMP echo helper (docs/checks.md, "How the agent pings").
 *
 * Usage: outpost-icmp <reply timeout in ms>
 *
 * At start it opens one ICMP socket per family, an unprivileged datagram socket where
 * net.ipv4.ping_group_range allows this process's group, else a raw socket (which needs
 * CAP_NET_RAW, e.g. from this file's cap_net_raw=ep). Then it drops every capability and sets
 * no_new_privs, before reading a byte of input: whatever its input, it can do no more than send
 * echo requests on the sockets it already holds.
 *
 * Protocol, one line each, on stdin/stdout:
 *   out  ready v4=<dgram|raw|none:ERRNO> v6=<...>      once, after the sockets are open
 *   in   <token> <4|6> <numeric address>               send one echo request
 *   out  <token> <rtt in ms>                           its reply arrived
 *   out  <token> timeout                               no reply within the timeout
 *   out  <token> error <ERRNO or reason>               it could not be sent
 * A token is a decimal number from 0 to 4294967295 chosen by the agent. EOF on stdin ends it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 65536
#define MAGIC 0x4f505354u /* "OPST": marks our payload among other processes' replies on a raw socket */

struct slot {
  int used;
  uint32_t token;
  struct timespec sent;
};

struct sock {
  int fd;
  int raw; /* raw sockets see every echo reply of the host: filter by id */
  char mode[32];
};

static struct slot slots[SLOTS];
static struct sock s4 = {-1, 0, ""}, s6 = {-1, 0, ""};
static uint16_t ident, next_seq, oldest_seq;
static unsigned outstanding;
static long timeout_ns;

static void open_family(struct sock *s, int domain, int proto) {
  int dgram_err, raw_err;
  s->fd = socket(domain, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (s->fd >= 0) {
    strcpy(s->mode, "dgram");
    return;
  }
  dgram_err = errno;
  s->fd = socket(domain, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (s->fd >= 0) {
    s->raw = 1;
    strcpy(s->mode, "raw");
    return;
  }
  raw_err = errno;
  snprintf(s->mode, sizeof s->mode, "none:%s/%s", strerrorname_np(dgram_err), strerrorname_np(raw_err));
}

/*
 * A raw socket queues every ICMP packet the host receives (on loopback, each echo request too):
 * only echo replies are let in, and the queue is made as deep as net.core.rmem_max allows, so a
 * burst of replies is not dropped before it is read.
 */
static void filter_replies(void) {
  int size = 4 << 20;
  if (s4.raw) {
    uint32_t blocked = ~(1u << ICMP_ECHOREPLY); /* struct icmp_filter: a bit per type to drop */
    setsockopt(s4.fd, SOL_RAW, 1 /* ICMP_FILTER */, &blocked, sizeof blocked);
  }
  if (s6.raw) {
    struct icmp6_filter filter;
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
    setsockopt(s6.fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
  }
  if (s4.fd >= 0) setsockopt(s4.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (s6.fd >= 0) setsockopt(s6.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

/* Nothing after the sockets are open needs a privilege: give up every capability for good. */
static int drop_privileges(void) {
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) return -1;
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static uint16_t checksum(const void *buf, size_t len) {
  const uint8_t *p = buf;
  uint32_t sum = 0;
  for (; len > 1; p += 2, len -= 2) sum += (uint32_t)(p[0] << 8 | p[1]);
  if (len) sum += (uint32_t)(p[0] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons((uint16_t)~sum);
}

static long elapsed_ns(const struct timespec *a, const struct timespec *b) {
  return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

static void send_echo(uint32_t token, int family, const char *addr) {
  struct sock *s = family == 6 ? &s6 : &s4;
  struct sockaddr_storage to;
  socklen_t tolen;
  memset(&to, 0, sizeof to);
  if (s->fd < 0) {
    printf("%u error %s\n", token, s->mode);
    return;
  }
  if (family == 6) {
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&to;
    sin6->sin6_family = AF_INET6;
    if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1) goto bad_address;
    tolen = sizeof *sin6;
  } else {
    struct sockaddr_in *sin = (struct sockaddr_in *)&to;
    sin->sin_family = AF_INET;
    if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) goto bad_address;
    tolen = sizeof *sin;
  }
  uint16_t seq = next_seq;
  struct slot *slot = &slots[seq];
  if (slot->used) {
    printf("%u error busy\n", token);
    return;
  }
  /* Type, code, checksum, id, sequence; then the token and our marker. */
  uint8_t pkt[16];
  memset(pkt, 0, sizeof pkt);
  pkt[0] = family == 6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
  uint16_t nid = htons(ident), nseq = htons(seq);
  uint32_t ntok = htonl(token), nmagic = htonl(MAGIC);
  memcpy(pkt + 4, &nid, 2);
  memcpy(pkt + 6, &nseq, 2);
  memcpy(pkt + 8, &ntok, 4);
  memcpy(pkt + 12, &nmagic, 4);
  /* The kernel checksums ICMPv6, and datagram sockets; a raw IPv4 socket sends what it is given. */
  if (family == 4) {
    uint16_t sum = checksum(pkt, sizeof pkt);
    memcpy(pkt + 2, &sum, 2);
  }
  clock_gettime(CLOCK_MONOTONIC, &slot->sent);
  if (sendto(s->fd, pkt, sizeof pkt, 0, (struct sockaddr *)&to, tolen) < 0) {
    printf("%u error %s\n", token, strerrorname_np(errno));
    return;
  }
  slot->used = 1;
  slot->token = token;
  if (outstanding++ == 0) oldest_seq = seq;
  next_seq++;
  return;
bad_address:
  printf("%u error bad-address\n", token);
}

static void receive(struct sock *s, int family) {
  uint8_t buf[1500];
  for (;;) {
    ssize_t n = recv(s->fd, buf, sizeof buf, 0);
    if (n < 0) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint8_t *icmp = buf;
    /* A raw IPv4 socket delivers the IP header too; every other kind starts at the ICMP header. */
    if (s->raw && family == 4) {
      if (n < 20) continue;
      size_t ihl = (size_t)(buf[0] & 0x0f) * 4;
      icmp += ihl;
      n -= (ssize_t)ihl;
    }
    if (n < 16) continue;
    if (icmp[0] != (family == 6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY)) continue;
    uint16_t id, seq;
    uint32_t token, magic;
    memcpy(&id, icmp + 4, 2);
    memcpy(&seq, icmp + 6, 2);
    memcpy(&token, icmp + 8, 4);
    memcpy(&magic, icmp + 12, 4);
    /* A datagram socket gets only its own replies, with an id the kernel chose. */
    if (s->raw && ntohs(id) != ident) continue;
    struct slot *slot = &slots[ntohs(seq)];
    if (ntohl(magic) != MAGIC || !slot->used || slot->token != ntohl(token)) continue;
    slot->used = 0;
    outstanding--;
    printf("%u %.3f\n", slot->token, (double)elapsed_ns(&slot->sent, &now) / 1e6);
  }
}

/* Echo requests are sent in sequence order and share one timeout, so the oldest expires first. */
static int expire(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  while (outstanding > 0) {
    struct slot *slot = &slots[oldest_seq];
    if (!slot->used) {
      oldest_seq++;
      continue;
    }
    long left = timeout_ns - elapsed_ns(&slot->sent, &now);
    if (left > 0) return (int)(left / 1000000) + 1;
    printf("%u timeout\n", slot->token);
    slot->used = 0;
    outstanding--;
    oldest_seq++;
  }
  return -1;
}

/* Handles complete lines in buf; returns how many bytes were consumed. */
static size_t handle_input(char *buf, size_t len) {
  size_t done = 0;
  for (;;) {
    char *nl = memchr(buf + done, '\n', len - done);
    if (!nl) return done;
    *nl = '\0';
    char *line = buf + done;
    done = (size_t)(nl - buf) + 1;
    unsigned long token;
    int family;
    char addr[64];
    if (sscanf(line, "%lu %d %63s", &token, &family, addr) != 3 || token > 0xffffffffUL || (family != 4 && family != 6)) {
      fprintf(stderr, "outpost-icmp: malformed request line\n");
      exit(2);
    }
    send_echo((uint32_t)token, family, addr);
  }
}

int main(int argc, char **argv) {
  long timeout_ms = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
  if (timeout_ms < 1 || timeout_ms > 60000) {
    fprintf(stderr, "usage: outpost-icmp <reply timeout in ms, 1 to 60000>\n");
    return 2;
  }
  timeout_ns = timeout_ms * 1000000L;
  ident = (uint16_t)getpid();
  open_family(&s4, AF_INET, IPPROTO_ICMP);
  open_family(&s6, AF_INET6, IPPROTO_ICMPV6);
  filter_replies();
  if (drop_privileges() != 0) {
    fprintf(stderr, "outpost-icmp: could not drop capabilities: %s\n", strerror(errno));
    return 1;
  }
  printf("ready v4=%s v6=%s\n", s4.mode, s6.mode);
  fflush(stdout);

  static char in[65536];
  size_t have = 0;
  struct pollfd fds[3] = {{0, POLLIN, 0}, {s4.fd, POLLIN, 0}, {s6.fd, POLLIN, 0}};
  for (;;) {
    int wait = expire();
    fflush(stdout);
    if (poll(fds, 3, wait) < 0 && errno != EINTR) return 1;
    if (fds[1].revents & POLLIN) receive(&s4, 4);
    if (fds[2].revents & POLLIN) receive(&s6, 6);
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = read(0, in + have, sizeof in - have);
      if (n <= 0) return 0;
      have += (size_t)n;
      size_t used = handle_input(in, have);
      memmove(in, in + used, have - used);
      have -= used;
      if (have == sizeof in) {
        fprintf(stderr, "outpost-icmp: request line too long\n");
        return 2;
      }
    }
  }
}
