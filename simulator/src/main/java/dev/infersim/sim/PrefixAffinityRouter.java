package dev.infersim.sim;

import dev.infersim.common.SplitMix64;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Prefix affinity by consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing
 * with Bounded Loads", SODA 2018; HAProxy's {@code hash-balance-factor}). The key is a hash of the prompt's leading
 * full KV-cache blocks, up to {@code prefixTokens} tokens, so requests that share a system prompt or a conversation
 * history land on the replica that has those blocks cached. Each replica owns {@value #POINTS_PER_REPLICA} points on a
 * 64-bit ring, placed by its id, so scaling the fleet moves only the keys of the replicas that came or went. A request
 * goes to the first replica clockwise from its key whose outstanding requests are below
 * {@code ceil(loadFactor * (total + 1) / replicas)}: no replica takes more than {@code loadFactor} times the mean, and a
 * hot prefix spills over to its ring neighbours instead of queueing behind itself. The loads are read once per decision
 * ({@link SignalReads}), so the bound and the loads it is checked against are one snapshot and some replica is always
 * below it.
 */
public final class PrefixAffinityRouter implements Router {
    /** Leading tokens hashed by default: 16 blocks of 16, enough to cover a typical system prompt. */
    public static final int DEFAULT_PREFIX_TOKENS = 256;
    /** Load bound by default: 1.25 times the mean, the paper's example and a common HAProxy setting. */
    public static final double DEFAULT_LOAD_FACTOR = 1.25;
    static final int POINTS_PER_REPLICA = 64;

    private final int prefixTokens;
    private final double loadFactor;
    private int[] tokenIds = new int[0];
    private int[] ringIds = new int[0];
    private long[] points = new long[0];
    private int[] owners = new int[0];
    private final SignalReads reads = new SignalReads();

    /**
     * @param prefixTokens leading prompt tokens hashed, rounded down to whole blocks (at least one block)
     * @param loadFactor   bound on a replica's outstanding requests as a multiple of the mean, > 1
     */
    public PrefixAffinityRouter(int prefixTokens, double loadFactor) {
        if (prefixTokens < 1) {
            throw new IllegalArgumentException("prefixTokens must be >= 1, got " + prefixTokens);
        }
        if (!(loadFactor > 1)) {
            throw new IllegalArgumentException("loadFactor must be > 1, got " + loadFactor);
        }
        this.prefixTokens = prefixTokens;
        this.loadFactor = loadFactor;
    }

    public PrefixAffinityRouter() {
        this(DEFAULT_PREFIX_TOKENS, DEFAULT_LOAD_FACTOR);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        if (replicas.length == 1) {
            return 0;
        }
        ensureRing(replicas);
        int[] loads = reads.loads(replicas);
        long total = 0;
        for (int i = 0; i < replicas.length; i++) {
            total += loads[i];
        }
        long capacity = (long) Math.ceil(loadFactor * (total + 1) / replicas.length);
        int start = Arrays.binarySearch(points, prefixKey(request, replicas[0]));
        start = start >= 0 ? start : -start - 1;
        for (int k = 0; k < points.length; k++) {
            int owner = owners[(start + k) % points.length];
            if (loads[owner] < capacity) {
                return owner;
            }
        }
        throw new IllegalStateException("no replica below the load bound " + capacity); // impossible: sum < n * bound
    }

    /** Hash of the prompt's leading whole blocks (the whole prompt when it is shorter than one block). */
    long prefixKey(RoutedRequest request, RoutingTarget any) {
        int block = any.blockSize();
        int wanted = Math.max(block, prefixTokens / block * block);
        int full = Math.min(wanted, request.promptTokens() / block * block);
        int n = full > 0 ? full : request.promptTokens();
        if (tokenIds.length < n) {
            tokenIds = new int[n];
        }
        request.fillLeadingTokenIds(tokenIds, n, any.vocabSize());
        long h = 0;
        for (int i = 0; i < n; i++) {
            h = h * 0x100000001b3L + tokenIds[i];
        }
        return SplitMix64.mix64(h);
    }

    /** Rebuilds the ring when the replicas taking requests differ from those it was built for. */
    private void ensureRing(RoutingTarget[] replicas) {
        if (sameIds(replicas)) {
            return;
        }
        ringIds = new int[replicas.length];
        long[][] pairs = new long[replicas.length * POINTS_PER_REPLICA][];
        for (int i = 0; i < replicas.length; i++) {
            ringIds[i] = replicas[i].id();
            for (int v = 0; v < POINTS_PER_REPLICA; v++) {
                pairs[i * POINTS_PER_REPLICA + v] = new long[] {SplitMix64.mix64(((long) replicas[i].id() << 32) | v), i};
            }
        }
        Arrays.sort(pairs, Comparator.comparingLong(p -> p[0]));
        points = new long[pairs.length];
        owners = new int[pairs.length];
        for (int k = 0; k < pairs.length; k++) {
            points[k] = pairs[k][0];
            owners[k] = (int) pairs[k][1];
        }
    }

    private boolean sameIds(RoutingTarget[] replicas) {
        if (replicas.length != ringIds.length) {
            return false;
        }
        for (int i = 0; i < replicas.length; i++) {
            if (replicas[i].id() != ringIds[i]) {
                return false;
            }
        }
        return true;
    }
}
