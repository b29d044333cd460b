package dev.infersim.server.output;

import java.util.Locale;

/**
 * What drawing one request's structured output may cost, all its choices together: characters written (the JSON
 * values of {@link JsonSchemaSampler} and {@link RegexSampler}, tool-call wrappers and names) and schema or pattern
 * nodes visited. A few hundred bytes of schema ($refs doubling at each level, arrays of 4,096 arrays of 4,096) or of
 * pattern (nested repetitions) would otherwise ask for minutes of work and more than the heap; past either limit the
 * request is refused with a 400 that names the limit. A value is drawn only as far as the reply's max_tokens reaches
 * ({@link JsonSchemaSampler}), so the limits bind only where the replies would carry that much: 262,144 characters
 * are about 65,000 tokens of JSON, across all of a request's choices. They keep one request's drawing to tens of
 * milliseconds and a few megabytes. One request's drawing runs on one thread: not thread-safe.
 */
public final class SamplingBudget {
    /** Characters of structured output a request's choices may draw in all. */
    static final long MAX_CHARS = 1 << 18;
    /** Schema and pattern nodes a request's choices may visit in all (each visit of a node counts). */
    static final long MAX_NODES = 250_000;

    private long chars;
    private long nodes;

    /** Counts {@code n} characters drawn; past {@link #MAX_CHARS}, refuses the request. */
    void chars(long n) {
        chars += n;
        if (chars > MAX_CHARS) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "the structured output of this request (all its "
                    + "choices) would exceed %,d characters, the mock's limit", MAX_CHARS));
        }
    }

    /** Counts one node visited. */
    void node() {
        nodes(1);
    }

    /** Counts {@code n} nodes visited; past {@link #MAX_NODES}, refuses the request. */
    void nodes(long n) {
        nodes += n;
        if (nodes > MAX_NODES) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "drawing the structured output of this request "
                    + "(all its choices) would visit over %,d schema and pattern nodes, the mock's limit", MAX_NODES));
        }
    }

    long charsDrawn() {
        return chars;
    }

    long nodesVisited() {
        return nodes;
    }
}
