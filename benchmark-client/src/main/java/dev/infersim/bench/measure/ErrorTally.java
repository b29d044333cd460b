package dev.infersim.bench.measure;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Failed requests counted by type (http_429, timeout, connection_reset, stream_error, ...) with the first few messages
 * of each type quoted verbatim in the result (and escaped where printed), so a report never hides why requests failed. Not thread-safe: the event loop owns it.
 */
public final class ErrorTally {
    private static final int QUOTED_PER_TYPE = 3;
    private static final int MAX_MESSAGE_CHARS = 300;

    private final Map<String, Long> counts = new TreeMap<>();
    private final Map<String, List<String>> firstMessages = new TreeMap<>();

    /** Counts one failure of {@code type}; keeps its message if it is among the first of its type. */
    public void record(String type, String message) {
        counts.merge(type, 1L, Long::sum);
        List<String> quoted = firstMessages.computeIfAbsent(type, t -> new ArrayList<>(QUOTED_PER_TYPE));
        if (quoted.size() < QUOTED_PER_TYPE && message != null) {
            quoted.add(message.length() > MAX_MESSAGE_CHARS ? message.substring(0, MAX_MESSAGE_CHARS) + "..." : message);
        }
    }

    public long total() {
        long sum = 0;
        for (long c : counts.values()) {
            sum += c;
        }
        return sum;
    }

    public Map<String, Long> counts() {
        return counts;
    }

    /** {type: {count, first_messages}} for the result JSON. */
    public Map<String, Quoted> byType() {
        Map<String, Quoted> out = new LinkedHashMap<>();
        counts.forEach((type, count) -> out.put(type, new Quoted(count, List.copyOf(firstMessages.get(type)))));
        return out;
    }

    /** One type's failures: how many, and the first few messages verbatim. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Quoted(long count, List<String> firstMessages) {
    }

    /** One line per type: count and the first message, safe to print ({@link TerminalText}: it is the server's text). */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        counts.forEach((type, count) -> {
            List<String> quoted = firstMessages.get(type);
            lines.add(type + ": " + count + (quoted.isEmpty() ? "" : " (first: \"" + TerminalText.printable(quoted.get(0)) + "\")"));
        });
        return lines;
    }
}
