package dev.infersim.workload;

import dev.infersim.workload.length.OutputLength;
import dev.infersim.workload.arrival.ArrivalProcess;
import dev.infersim.workload.arrival.LoadPattern;
import dev.infersim.common.ConfigException;
import dev.infersim.common.SplitMix64;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.ToIntFunction;

/**
 * A finite, lazily generated request stream: a {@link Dataset} for the contents, a {@link LoadPattern} for the
 * arrival times, a request count and a seed. Each {@link #iterator()} replays the same requests from the start;
 * nothing is held per request, so a million-request run streams in constant memory.
 *
 * <pre>{@code
 * Workload workload = Workload.open(WorkloadSpec.builder()
 *         .datasetName("random").randomInputLen(512).randomOutputLen(128)
 *         .requestRate(10).numPrompts(1000).seed(42).build());
 * for (WorkloadRequest r : workload) { ... r.arrivalNanos(), r.promptTokenIds(vocab), r.maxTokens() ... }
 * workload.load().maxConcurrency();   // the driver's in-flight cap (0 = none); closed loop when workload.isClosedLoop()
 * }</pre>
 *
 * The content and arrival streams use independent seeds derived from the workload seed, so changing the rate
 * leaves every request's lengths and token ids unchanged.
 */
public final class Workload implements Iterable<WorkloadRequest> {

    private final Dataset dataset;
    private final LoadPattern load;
    private final long size;
    private final long seed;

    /**
     * @param dataset    request contents
     * @param load       arrivals and concurrency cap; ignored for arrival times when the dataset records its own
     * @param numPrompts requested count; the stream has {@code dataset.requestCount(numPrompts)} requests
     * @param seed       the workload seed
     */
    public Workload(Dataset dataset, LoadPattern load, long numPrompts, long seed) {
        this.dataset = dataset;
        this.load = load;
        this.size = dataset.requestCount(numPrompts);
        this.seed = seed;
        if (size < 1) {
            throw new IllegalArgumentException("dataset " + dataset.name() + " yields no requests for " + numPrompts
                    + " prompts");
        }
    }

    /** Opens the spec's stream, counting ShareGPT text tokens with {@link ShareGptDataset#APPROXIMATE_TOKENS}. */
    public static Workload open(WorkloadSpec spec) {
        return open(spec, ShareGptDataset.APPROXIMATE_TOKENS);
    }

    /**
     * Opens the spec's stream.
     *
     * @param tokenCounter counts the tokens of ShareGPT texts (the benchmark client passes its tokenizer)
     * @throws ConfigException when a dataset file is missing or malformed, naming the file and line
     */
    public static Workload open(WorkloadSpec spec, ToIntFunction<String> tokenCounter) {
        try {
            OutputLength outputLength = spec.outputLength();
            Dataset dataset = switch (spec.datasetName()) {
                case WorkloadSpec.RANDOM -> SyntheticDataset.random(spec.randomInputLen(), spec.randomOutputLen(),
                        spec.randomRangeRatio(), spec.randomPrefixLen(), outputLength);
                case WorkloadSpec.PREFIX_REPETITION -> new PrefixRepetitionDataset(spec.prefixRepetitionPrefixLen(),
                        spec.prefixRepetitionSuffixLen(), spec.prefixRepetitionNumPrefixes(),
                        spec.prefixRepetitionOutputLen(), spec.prefixRepetitionOrder(), outputLength);
                case WorkloadSpec.SHAREGPT -> ShareGptDataset.load(spec.datasetPath(), tokenCounter,
                        spec.sharegptOutputLen(), outputLength);
                case WorkloadSpec.TRACE -> TraceDataset.load(spec.datasetPath(), outputLength);
                case WorkloadSpec.WORKLOAD -> new SyntheticDataset(spec.profile().name(),
                        spec.profile().requestClasses(), outputLength);
                default -> throw new IllegalStateException("unhandled dataset " + spec.datasetName());
            };
            return new Workload(dataset, spec.load(), spec.numPrompts(), spec.seed());
        } catch (IllegalArgumentException e) {
            throw WorkloadSpec.invalid(e);
        }
    }

    public Dataset dataset() {
        return dataset;
    }

    public LoadPattern load() {
        return load;
    }

    /**
     * True when the concurrency cap alone paces the requests ({@link LoadPattern#isClosedLoop()}). A trace's arrival
     * times are recorded, not a rate of inf, so under a cap its requests still wait for their timestamps.
     */
    public boolean isClosedLoop() {
        return load.isClosedLoop() && dataset.recordedArrivals() == null;
    }

    /** Number of requests in the stream. */
    public long size() {
        return size;
    }

    public long seed() {
        return seed;
    }

    /** A fresh pass over the stream, from request 0. */
    @Override
    public Iterator<WorkloadRequest> iterator() {
        ArrivalProcess recorded = dataset.recordedArrivals();
        ArrivalProcess arrivals = recorded != null ? recorded : load.arrivals(size, SplitMix64.valueAt(seed, 0));
        Dataset.Cursor cursor = dataset.cursor(SplitMix64.valueAt(seed, 1), size);
        return new Iterator<>() {
            private long next;

            @Override
            public boolean hasNext() {
                return next < size;
            }

            @Override
            public WorkloadRequest next() {
                if (next >= size) {
                    throw new NoSuchElementException("the workload has " + size + " requests");
                }
                long index = next++;
                return cursor.next(index, arrivals.nextArrivalNanos());
            }
        };
    }
}
