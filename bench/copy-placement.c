// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * copy-placement: what a copy costs by where it runs. No kdbus: two
 * processes share a buffer; each round, a producer makes N bytes
 * available and a consumer reads every cache line of them. Three ways:
 *
 *   push, same CPU   the producer copies into the shared buffer, the
 *                    consumer runs on the producer's CPU
 *   push, other CPU  the same with the consumer on the other CPU: the
 *                    copy writes lines the consumer's CPU read last round
 *                    (how a sender's SEND wrote into a receiver's pool)
 *   pull, other CPU  the consumer copies from the producer's buffer into
 *                    its own, then reads it (how the receiver of a large
 *                    synchronous call copies it, kdbus_queue_entry_pull())
 *
 * and prints the mean time of the copy and of the consumer's read per
 * round. Documentation/performance.md, "Who copies", has the figures;
 * run it in the VM with
 *
 *   vm/run -c "/host$PWD/bench/copy-placement"
 *
 * Usage: copy-placement [SIZE...]   (bytes, default 131072 1048576)
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 200

enum mode { PUSH_SAME, PUSH_OTHER, PULL_OTHER, N_MODES };

static const char *const mode_name[N_MODES] = {
	"push, same CPU", "push, other CPU", "pull, other CPU",
};

struct shared {
	double copy_us;		/* summed over rounds, by whoever copies */
	double read_us;		/* summed over rounds, by the consumer */
	volatile uint64_t sink;
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static uint64_t read_lines(const uint8_t *p, size_t n)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < n; i += 64)
		s += p[i];
	return s;
}

static int full_io(int fd, int write_side)
{
	char c = 0;
	ssize_t r = write_side ? write(fd, &c, 1) : read(fd, &c, 1);

	return r == 1 ? 0 : -1;
}

/* the consumer: wait for the producer, (copy,) read, report back */
static int consumer(struct shared *sh, uint8_t *src, uint8_t *shared_buf,
		    size_t n, enum mode m, int in, int out)
{
	uint8_t *own = NULL;
	int r;

	if (pin(m == PUSH_SAME ? 0 : 1) < 0)
		return 1;
	if (m == PULL_OTHER) {
		own = malloc(n);
		if (!own)
			return 1;
		memset(own, 0, n);
	}
	for (r = 0; r < ROUNDS; r++) {
		const uint8_t *p = shared_buf;
		double t0, t1;

		if (full_io(in, 0) < 0)
			return 1;
		t0 = now_us();
		if (m == PULL_OTHER) {
			memcpy(own, src, n);
			p = own;
		}
		t1 = now_us();
		sh->sink += read_lines(p, n);
		sh->copy_us += t1 - t0;
		sh->read_us += now_us() - t1;
		if (full_io(out, 1) < 0)
			return 1;
	}
	free(own);
	return 0;
}

static int run(size_t n, enum mode m)
{
	struct shared *sh;
	uint8_t *src, *buf, *data;
	int to_c[2], to_p[2], status, r;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	buf = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	data = malloc(n);
	if (sh == MAP_FAILED || src == MAP_FAILED || buf == MAP_FAILED ||
	    !data || pipe(to_c) < 0 || pipe(to_p) < 0) {
		perror("copy-placement: setup");
		return -1;
	}
	memset(sh, 0, sizeof(*sh));
	memset(data, 0x5a, n);
	memset(buf, 0, n);

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("copy-placement: fork");
		return -1;
	}
	if (pid == 0)
		_exit(consumer(sh, src, buf, n, m, to_c[0], to_p[1]));

	if (pin(0) < 0) {
		perror("copy-placement: sched_setaffinity");
		return -1;
	}
	for (r = 0; r < ROUNDS; r++) {
		/* the producer's data, fresh each round */
		memset(m == PULL_OTHER ? src : data, r, n);
		if (m != PULL_OTHER) {
			double t0 = now_us();

			memcpy(buf, data, n);
			sh->copy_us += now_us() - t0;
		}
		if (full_io(to_c[1], 1) < 0 || full_io(to_p[0], 0) < 0)
			break;
	}
	waitpid(pid, &status, 0);
	if (r != ROUNDS || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "copy-placement: the consumer failed\n");
		return -1;
	}
	printf("%8zu  %-16s %10.1f %10.1f %10.1f\n", n, mode_name[m],
	       sh->copy_us / ROUNDS, sh->read_us / ROUNDS,
	       (sh->copy_us + sh->read_us) / ROUNDS);

	free(data);
	munmap(sh, sizeof(*sh));
	munmap(src, n);
	munmap(buf, n);
	close(to_c[0]);
	close(to_c[1]);
	close(to_p[0]);
	close(to_p[1]);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 131072, 1048576 };
	int i, n = argc > 1 ? argc - 1 : 2;
	enum mode m;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "copy-placement: needs two CPUs\n");
		return 1;
	}
	printf("copy-placement: mean per round of %d, us (producer on CPU 0)\n",
	       ROUNDS);
	printf("%8s  %-16s %10s %10s %10s\n", "bytes", "who copies", "copy",
	       "read", "copy+read");
	for (i = 0; i < n; i++) {
		size_t size = argc > 1 ? strtoul(argv[i + 1], NULL, 0) :
					 defaults[i];

		if (size < 64) {
			fprintf(stderr, "copy-placement: size %zu too small\n",
				size);
			return 1;
		}
		for (m = 0; m < N_MODES; m++)
			if (run(size, m) < 0)
				return 1;
	}
	return 0;
}
