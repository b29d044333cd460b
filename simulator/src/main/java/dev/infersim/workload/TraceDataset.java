package dev.infersim.workload;

import dev.infersim.workload.length.OutputLength;
import dev.infersim.workload.arrival.ArrivalProcess;
import dev.infersim.workload.arrival.TraceArrivals;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;
import dev.infersim.common.JsonSyntax;
import dev.infersim.common.SplitMix64;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * A recorded request trace in JSON Lines, one request per line, replayed with its own arrival times:
 * <pre>
 * {"timestamp_ms": 0, "input_len": 812, "output_len": 164}
 * {"timestamp_ms": 37.5, "input_len": 2048, "output_len": 90, "prefix_group": 7, "prefix_len": 1024}
 * </pre>
 * {@code timestamp_ms} (non-decreasing, any origin: times are taken relative to the first line), {@code input_len}
 * (prompt tokens, prefix included) and {@code output_len} (the request's max_tokens) are required;
 * {@code prefix_group} (any integer id) and {@code prefix_len} (tokens of that shared prefix) go together and mark
 * requests that share a prefix, as in anonymised production traces (Mooncake-style traces carry the same fields
 * under other names). Blank lines are skipped. The trace is held as primitive arrays, about 24 bytes per line. Bounds,
 * each refused with one line naming the file, line and field: timestamps within 31 days of the first line's, token
 * counts within infersim's cap of 16 Mi.
 */
public final class TraceDataset implements Dataset {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> FIELDS = Set.of("timestamp_ms", "input_len", "output_len", "prefix_group",
            "prefix_len");
    /** The longest span a trace may cover, first line to last: 31 days (a month of production traffic). */
    static final double MAX_SPAN_MS = 31 * 86_400_000.0;

    private final long[] timestampsNanos;
    private final int[] inputTokens;
    private final int[] maxTokens;
    private final int[] prefixGroup;
    private final int[] prefixTokens;
    private final OutputLength outputLength;

    TraceDataset(long[] timestampsNanos, int[] inputTokens, int[] maxTokens, int[] prefixGroup, int[] prefixTokens,
                 OutputLength outputLength) {
        this.timestampsNanos = timestampsNanos;
        this.inputTokens = inputTokens;
        this.maxTokens = maxTokens;
        this.prefixGroup = prefixGroup;
        this.prefixTokens = prefixTokens;
        this.outputLength = outputLength;
    }

    /**
     * Reads a JSONL trace.
     *
     * @throws ConfigException naming the file, line and field when a line is malformed
     */
    public static TraceDataset load(Path path, OutputLength outputLength) {
        DatasetPath.requireFile(path, "trace file");
        long[] times = new long[64];
        IntList inputs = new IntList();
        IntList outputs = new IntList();
        IntList groups = new IntList();
        IntList prefixes = new IntList();
        Map<Long, Integer> denseGroups = new HashMap<>();
        double firstMs = 0;
        int lineNo = 0;
        try (BufferedReader reader = Files.newBufferedReader(path)) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                String where = path + ":" + lineNo;
                JsonNode node = parseLine(line, where);
                int n = inputs.size();
                if (n == times.length) {
                    times = Arrays.copyOf(times, n * 2);
                }
                double ms = number(node, "timestamp_ms", where);
                if (n == 0) {
                    firstMs = ms;
                }
                if (ms - firstMs > MAX_SPAN_MS) {
                    throw new ConfigException(where + ": field 'timestamp_ms': " + node.get("timestamp_ms") + " is more than 31 "
                            + "days after the first line's " + firstMs + " ms; infersim replays at most 31 days of a trace");
                }
                times[n] = Math.round((ms - firstMs) * 1e6);
                if (n > 0 && times[n] < times[n - 1]) {
                    throw new ConfigException(where + ": field 'timestamp_ms': " + ms
                            + " is earlier than the previous line's; a trace must be in time order");
                }
                int input = integer(node, "input_len", where, 1);
                capped(input, where + ": field 'input_len'", "prompt");
                inputs.add(input);
                int output = integer(node, "output_len", where, 1);
                capped(output, where + ": field 'output_len'", "output");
                outputs.add(output);
                if (node.has("prefix_group") != node.has("prefix_len")) {
                    throw new ConfigException(where + ": field '" + (node.has("prefix_group") ? "prefix_len" : "prefix_group")
                            + "': prefix_group and prefix_len go together");
                }
                if (node.has("prefix_group")) {
                    long id = (long) number(node, "prefix_group", where);
                    int prefix = integer(node, "prefix_len", where, 1);
                    if (prefix > input) {
                        throw new ConfigException(where + ": field 'prefix_len': " + prefix
                                + " exceeds input_len " + input);
                    }
                    groups.add(denseGroups.computeIfAbsent(id, k -> denseGroups.size()));
                    prefixes.add(prefix);
                } else {
                    groups.add(-1);
                    prefixes.add(0);
                }
            }
        } catch (IOException e) {
            throw new ConfigException("--dataset-path: cannot read " + path + ": " + e.getMessage(), e);
        }
        if (inputs.size() == 0) {
            throw new ConfigException(path + ": the trace has no requests");
        }
        return new TraceDataset(Arrays.copyOf(times, inputs.size()), inputs.toArray(), outputs.toArray(),
                groups.toArray(), prefixes.toArray(), outputLength);
    }

    /** infersim's cap on token counts, far above any model's context window (the prompt's, {@link WorkloadRequest}). */
    private static void capped(int tokens, String what, String kind) {
        if (tokens > WorkloadRequest.MAX_PROMPT_TOKENS) {
            throw new ConfigException(what + ": " + tokens + " " + kind + " tokens exceed infersim's cap of "
                    + String.format(java.util.Locale.ROOT, "%,d", WorkloadRequest.MAX_PROMPT_TOKENS)
                    + " (far above any model's context window)");
        }
    }

    private static JsonNode parseLine(String line, String where) {
        JsonNode node;
        try {
            node = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            int column = e.getLocation() == null ? -1 : e.getLocation().getColumnNr();
            throw new ConfigException(where + (column > 0 ? ":" + column : "") + ": malformed JSON: "
                    + JsonSyntax.reason(e), e);
        }
        if (node == null || !node.isObject()) {
            throw new ConfigException(where + ": each line must be a JSON object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!FIELDS.contains(field)) {
                throw new ConfigException(where + ": field '" + field + "' is unknown; a trace line has "
                        + "timestamp_ms, input_len, output_len and optionally prefix_group with prefix_len");
            }
        }
        return node;
    }

    private static double number(JsonNode node, String field, String where) {
        JsonNode value = node.get(field);
        if (value == null || !value.isNumber() || !Double.isFinite(value.doubleValue()) || value.doubleValue() < 0) {
            throw new ConfigException(where + ": field '" + field + "': needs a number >= 0"
                    + (value == null ? ", missing" : ", got " + value));
        }
        return value.doubleValue();
    }

    private static int integer(JsonNode node, String field, String where, int min) {
        JsonNode value = node.get(field);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < min) {
            throw new ConfigException(where + ": field '" + field + "': needs an integer >= " + min
                    + (value == null ? ", missing" : ", got " + value));
        }
        return value.intValue();
    }

    @Override
    public String name() {
        return WorkloadSpec.TRACE;
    }

    /** The trace's length; a run asking for more prompts stops at the last line. */
    @Override
    public long requestCount(long numPrompts) {
        return Math.min(numPrompts, inputTokens.length);
    }

    @Override
    public ArrivalProcess recordedArrivals() {
        return new TraceArrivals(timestampsNanos);
    }

    @Override
    public Cursor cursor(long seed, long requests) {
        long contentBase = SplitMix64.valueAt(seed, 0);
        PrefixGroups prefixes = new PrefixGroups(SplitMix64.valueAt(seed, 1));
        SplitMix64 rng = new SplitMix64(0);
        return (index, arrivalNanos) -> {
            int i = (int) index;
            rng.reseed(SplitMix64.valueAt(contentBase, index));
            int output = outputLength.outputTokens(maxTokens[i], rng);
            int group = prefixGroup[i];
            return new WorkloadRequest(index, arrivalNanos, inputTokens[i], prefixTokens[i], group, maxTokens[i],
                    output, rng.nextLong(), group < 0 ? 0L : prefixes.seedOf(group), group >= 0 && prefixes.markFirst(group),
                    WorkloadSpec.TRACE, null);
        };
    }
}
