package dev.infersim.common;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The read-lateness bound in virtual time: a loop whose clock, task queue and accounts (CPU, run queue, pauses) the test
 * moves by hand, through the ways a chunk's bytes wait before the loop reads them. Each case states when the bytes
 * arrived; the bound must be at least that wait, and not much more.
 */
class ReadLatenessTest {
    private static final long US = 1_000;
    private static final long MS = 1_000_000;

    private long now;
    private long cpu;
    private long queue;
    private long pauses;
    private final List<Runnable> tasks = new ArrayList<>();
    private ReadLateness reads;

    @BeforeEach
    void open() {
        reads = new ReadLateness(() -> now, tasks::add);
        reads.open(new ReadLateness.Accounts() {
            @Override
            public long cpuNanos() {
                return cpu;
            }

            @Override
            public long runQueueNanos() {
                return queue;
            }

            @Override
            public long pauseNanos() {
                return pauses;
            }
        });
    }

    /** The loop runs for {@code nanos} on a CPU. */
    private void run(long nanos) {
        now += nanos;
        cpu += nanos;
    }

    /** The loop ends its batch: its queued marker runs. */
    private void endBatch() {
        List<Runnable> due = new ArrayList<>(tasks);
        tasks.clear();
        due.forEach(Runnable::run);
    }

    @Test
    void aSleepingLoopWokenByTheBytesIsLateByItsWaitForACpuAndWhatItReadBefore() {
        now = 10 * MS; // asleep in epoll_wait since 0; the bytes of two streams arrive at 10 ms
        queue += 300 * US; // runnable, waiting for a CPU
        now += 300 * US;
        run(50 * US); // epoll's return, the first read's decoding
        assertEquals(350 * US, reads.at(now));
        run(150 * US);
        assertEquals(500 * US, reads.at(now), "the second stream waited for the first's read too");
        assertEquals(1, tasks.size(), "one marker per batch");
    }

    @Test
    void bytesThatArriveWhileTheLoopReadsOthersWaitForTheWholeBatch() {
        now = 10 * MS;
        run(50 * US);
        reads.at(now); // batch 1 read at 10.05 ms, its bytes from 10.0 ms
        run(400 * US); // meanwhile, at 10.1 ms, another stream's bytes arrive
        endBatch();
        run(20 * US); // epoll returns at once: no sleep in between
        long late = reads.at(now);
        assertTrue(late >= now - (10 * MS + 100 * US), "bound " + late + " below the true wait");
        assertEquals(now - 10 * MS, late, "back to the start of the batch it could not be read in");
    }

    @Test
    void aThreadHeldOffTheCpuOrByACollectionIsLateByAllOfIt() {
        endBatch();
        now = 20 * MS; // asleep; bytes arrive at 20 ms; the thread waits 5 ms for a CPU
        queue += 5 * MS;
        now += 5 * MS;
        run(50 * US);
        assertEquals(5 * MS + 50 * US, reads.at(now));
        run(10 * US);
        endBatch();
        now = 40 * MS; // bytes at 40 ms, but a collection stops the JVM from 39.9 to 43 ms
        pauses += 4 * MS; // 3.1 ms reported as 3 ms plus 1 ms for the collection itself
        now = 43 * MS;
        run(20 * US);
        long late = reads.at(now);
        assertTrue(late >= 3 * MS + 20 * US, "bound " + late + " below the true wait");
        assertTrue(late <= 4 * MS + 20 * US, "bound " + late);
    }

    @Test
    void aLongTaskOfTheLoopDelaysTheBytesThatArriveDuringIt() {
        endBatch();
        now = 35 * MS;
        run(20 * MS); // a task of the loop's own from 35 to 55 ms; bytes arrive at 36 ms
        run(10 * US);
        long late = reads.at(now);
        assertTrue(late >= now - 36 * MS, "bound " + late + " below the true wait");
    }

    @Test
    void withoutTheSchedulersAccountsTheLatenessIsUnknown() {
        ReadLateness blind = new ReadLateness(() -> now, tasks::add);
        blind.open(new ReadLateness.Accounts() {
            @Override
            public long cpuNanos() {
                return 0;
            }

            @Override
            public long runQueueNanos() {
                return -1;
            }

            @Override
            public long pauseNanos() {
                return 0;
            }
        });
        assertEquals(ReadLateness.UNKNOWN, blind.at(5 * MS));
    }

    /** On this machine's own threads: the accounts read, and grow as the thread runs. */
    @Test
    void theCurrentThreadsAccountsAreRead() {
        ReadLateness.Accounts own = ReadLateness.ofCurrentThread();
        if (own.runQueueNanos() < 0) {
            return; // not Linux: nothing to read, and the lateness is unknown (above)
        }
        long before = own.cpuNanos();
        long spin = System.nanoTime() + 2 * MS;
        while (System.nanoTime() < spin) {
            Thread.onSpinWait();
        }
        assertTrue(own.cpuNanos() > before);
        assertTrue(own.runQueueNanos() >= 0);
        assertTrue(own.pauseNanos() >= 0);
    }
}
