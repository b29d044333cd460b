package dev.infersim.workload;

import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * One of {@code count} shards of a workload run from several client machines ({@code bench --shard I/N}): every shard
 * generates the whole seeded stream and keeps only its own requests, so together they send exactly what one unsharded
 * run would, at the same times. An open loop deals requests round-robin by index (every N-th request), which keeps
 * each shard's rate 1/N of the whole at every moment; a closed loop splits by a hash of the index instead, so no shard
 * holds a run of consecutive requests whose lengths are correlated by the dataset's order.
 *
 * @param index this shard, 0-based
 * @param count shards in all
 */
public record Shard(int index, int count) {

    /** The whole workload as one shard. */
    public static final Shard WHOLE = new Shard(0, 1);

    public Shard {
        ConfigException.check(count >= 1 && index >= 0 && index < count,
                "--shard: need I/N with 0 <= I < N, got %d/%d", index, count);
    }

    /** Parses {@code I/N}, naming the flag in the error. */
    public static Shard parse(String text) {
        int slash = text.indexOf('/');
        try {
            ConfigException.check(slash > 0, "--shard: expected I/N such as 0/4, got '%s'", text);
            return new Shard(Integer.parseInt(text.substring(0, slash).trim()),
                    Integer.parseInt(text.substring(slash + 1).trim()));
        } catch (NumberFormatException e) {
            throw new ConfigException("--shard: expected I/N such as 0/4, got '" + text + "'");
        }
    }

    public boolean isWhole() {
        return count == 1;
    }

    /** Whether request {@code requestIndex} of the stream is this shard's. */
    public boolean owns(long requestIndex, boolean closedLoop) {
        if (count == 1) {
            return true;
        }
        long slot = closedLoop ? SplitMix64.mix64(requestIndex) : requestIndex;
        return Math.floorMod(slot, count) == index;
    }

    /** How many of the first {@code size} requests are this shard's. */
    public long size(long size, boolean closedLoop) {
        if (!closedLoop) {
            return size <= index ? 0 : (size - index + count - 1) / count;
        }
        long n = 0;
        for (long i = 0; i < size; i++) {
            n += owns(i, true) ? 1 : 0;
        }
        return n;
    }

    /** This shard's requests of {@code workload}, in stream order, with their indices and times unchanged. */
    public Iterator<WorkloadRequest> requests(Workload workload) {
        Iterator<WorkloadRequest> all = workload.iterator();
        boolean closedLoop = workload.isClosedLoop();
        return new Iterator<>() {
            private WorkloadRequest next = advance();

            private WorkloadRequest advance() {
                while (all.hasNext()) {
                    WorkloadRequest r = all.next();
                    if (owns(r.index(), closedLoop)) {
                        return r;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public WorkloadRequest next() {
                if (next == null) {
                    throw new NoSuchElementException("shard " + this + " has no more requests");
                }
                WorkloadRequest r = next;
                next = advance();
                return r;
            }
        };
    }

    @Override
    public String toString() {
        return index + "/" + count;
    }
}
