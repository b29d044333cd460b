package dev.infersim.server.output;

import java.util.Arrays;
import java.util.List;

/**
 * A request's stop strings as one Aho-Corasick automaton (A. V. Aho and M. J. Corasick, "Efficient string matching: an
 * aid to bibliographic search", CACM 18(6), 1975): output text is read once, a character at a time, so a token costs
 * the same however many stop strings the request has. vLLM searches a token's new text for each stop string in turn
 * ({@code check_stop_strings} in {@code vllm/v1/engine/detokenizer.py}) and takes the first string of the request's
 * list that ends there; {@link #firstEnding} answers the same question.
 *
 * <p>The trie is built breadth first from the sorted strings, so a node's children are consecutive and sorted by their
 * character, and a transition is a binary search: about 20 bytes per character of the strings. vLLM sets no limit on
 * stop strings; infersim refuses more than {@value #MAX_CHARS} characters in all, which keeps the automaton of one
 * request within about 20 MB.
 */
public final class StopStrings {
    /** The most characters, all stop strings of a request together, the server accepts. */
    public static final int MAX_CHARS = 1 << 20;
    private static final int ROOT = 0;

    private final List<String> stops;
    private final int longest;
    private final int[] firstChild;
    private final int[] childCount;
    /** The character on the edge into each node. */
    private final char[] label;
    private final int[] fail;
    /** Per node, the lowest list index of a stop string that ends there (the node's own or along its fail links), or -1. */
    private final int[] firstEnding;

    private StopStrings(List<String> stops) {
        this.stops = List.copyOf(stops);
        int chars = 0;
        int max = 0;
        for (String s : stops) {
            chars += s.length();
            max = Math.max(max, s.length());
        }
        longest = max;
        int capacity = chars + 1;
        firstChild = new int[capacity];
        childCount = new int[capacity];
        label = new char[capacity];
        fail = new int[capacity];
        firstEnding = new int[capacity];
        build(capacity);
    }

    /** The automaton of {@code stops} (non-empty strings, in the request's order); null when there are none. */
    public static StopStrings of(List<String> stops) {
        return stops.isEmpty() ? null : new StopStrings(stops);
    }

    /** The length of the longest stop string: vLLM holds back one character less of a stream's text. */
    public int longest() {
        return longest;
    }

    public String get(int index) {
        return stops.get(index);
    }

    /** The state before any text. */
    public static int start() {
        return ROOT;
    }

    /** The state after reading {@code c} in {@code state}. */
    public int step(int state, char c) {
        while (true) {
            int child = child(state, c);
            if (child >= 0) {
                return child;
            }
            if (state == ROOT) {
                return ROOT;
            }
            state = fail[state];
        }
    }

    /** The lowest list index of a stop string that ends with the last character read into {@code state}, or -1. */
    public int firstEnding(int state) {
        return firstEnding[state];
    }

    private int child(int node, char c) {
        int lo = firstChild[node];
        int hi = lo + childCount[node] - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            char m = label[mid];
            if (m < c) {
                lo = mid + 1;
            } else if (m > c) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /**
     * Breadth first over the sorted strings: a node stands for a range of them sharing its prefix; its children are
     * the runs of equal characters at its depth, allocated together, so every node's id is larger than its parent's and
     * its fail target's, and one pass in id order can fill in fail links and endings.
     */
    private void build(int capacity) {
        Integer[] order = new Integer[stops.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> stops.get(a).compareTo(stops.get(b)));
        int[] lo = new int[capacity];
        int[] hi = new int[capacity];
        int[] depth = new int[capacity];
        int[] parent = new int[capacity];
        Arrays.fill(firstEnding, -1);
        hi[ROOT] = order.length;
        int nodes = 1;
        for (int v = 0; v < nodes; v++) {
            int d = depth[v];
            int i = lo[v];
            while (i < hi[v] && stops.get(order[i]).length() == d) {
                firstEnding[v] = firstEnding[v] < 0 ? order[i] : Math.min(firstEnding[v], order[i]);
                i++;
            }
            firstChild[v] = nodes;
            while (i < hi[v]) {
                char c = stops.get(order[i]).charAt(d);
                int j = i;
                while (j < hi[v] && stops.get(order[j]).charAt(d) == c) {
                    j++;
                }
                label[nodes] = c;
                lo[nodes] = i;
                hi[nodes] = j;
                depth[nodes] = d + 1;
                parent[nodes] = v;
                nodes++;
                i = j;
            }
            childCount[v] = nodes - firstChild[v];
        }
        for (int v = 1; v < nodes; v++) {
            int p = parent[v];
            fail[v] = p == ROOT ? ROOT : step(fail[p], label[v]);
            int inherited = firstEnding[fail[v]];
            if (inherited >= 0 && (firstEnding[v] < 0 || inherited < firstEnding[v])) {
                firstEnding[v] = inherited;
            }
        }
    }
}
