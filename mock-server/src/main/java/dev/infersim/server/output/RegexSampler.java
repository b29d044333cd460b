package dev.infersim.server.output;

import dev.infersim.common.SplitMix64;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Draws a string that a JSON Schema {@code pattern} (an ECMA-262 regular expression) matches: literals, {@code .},
 * character classes with ranges and negation, the escapes {@code \d \w \s} and their negations, groups (capturing or
 * {@code (?:...)}), alternation and the quantifiers {@code ? * + {n} {n,} {n,m}} (lazy or not). Anchors are accepted
 * and need nothing: the whole drawn string matches. Lookaround and back-references are refused with
 * {@link IllegalArgumentException}, as no string can be drawn for them without a search. A repetition draws at most
 * {@value #SPARE_REPEATS} more than its minimum (any count within its bounds matches), an unbounded one at most three.
 *
 * <p>Bounded for patterns from a request: groups nest at most {@value #MAX_NESTING} deep (the parser recurses once per
 * group), a repetition's minimum is at most {@value #MAX_REPEAT}, a draw stops as soon as it is longer than the length
 * asked, and every node visited and character drawn counts against the request's {@link SamplingBudget}, so nested
 * repetitions ({@code ((a{4096}){4096}){4096}}) end in a 400 rather than in minutes of work.
 */
final class RegexSampler {
    /** Groups nested deeper than this are refused. */
    static final int MAX_NESTING = 64;
    /** The largest minimum of a repetition ({@code a{n}}, {@code a{n,m}}): as many characters as a schema's minLength. */
    static final int MAX_REPEAT = JsonSchemaSampler.MAX_MINIMUM;
    /** A repetition draws its count from its minimum to this many more (or its maximum, when lower). */
    static final int SPARE_REPEATS = 16;
    /** Printable ASCII: what {@code .} and negated classes draw from. */
    private static final CharSet PRINTABLE = CharSet.range(' ', '~');
    private static final CharSet DIGITS = CharSet.range('0', '9');
    private static final CharSet WORD = CharSet.of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    private static final CharSet SPACE = CharSet.of(" \t");
    private static final int ATTEMPTS = 64;

    /** A part of the pattern that appends what it matches. */
    private interface Node {
        void emit(Draw d);
    }

    /** One draw: the random stream, the text so far, the longest text wanted and the request's budget. */
    private static final class Draw {
        final SplitMix64 rng;
        final StringBuilder out = new StringBuilder();
        final long maxChars;
        final SamplingBudget budget;

        Draw(SplitMix64 rng, int maxLength, SamplingBudget budget) {
            this.rng = rng;
            this.maxChars = 2L * maxLength; // a code point is at most two chars
            this.budget = budget;
        }

        void append(char c) {
            budget.chars(1);
            out.append(c);
            if (out.length() > maxChars) {
                throw TooLong.INSTANCE;
            }
        }

        int below(int bound) {
            return bound <= 1 ? 0 : Math.floorMod(rng.nextLong(), bound);
        }
    }

    /** An attempt that outgrew the length asked: abandoned at once, the next one drawn. */
    private static final class TooLong extends RuntimeException {
        static final TooLong INSTANCE = new TooLong();

        private TooLong() {
            super(null, null, false, false);
        }
    }

    /** A parsed pattern, drawn from as often as a schema needs its strings. */
    static final class Compiled {
        private final String pattern;
        private final Node root;

        private Compiled(String pattern, Node root) {
            this.pattern = pattern;
            this.root = root;
        }

        /** A string matching the pattern whose length (in code points) is within [minLength, maxLength]. */
        String sample(SplitMix64 rng, int minLength, int maxLength, SamplingBudget budget) {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                Draw d = new Draw(rng, maxLength, budget);
                try {
                    root.emit(d);
                } catch (TooLong longer) {
                    continue;
                }
                int n = d.out.codePointCount(0, d.out.length());
                if (n >= minLength && n <= maxLength) {
                    return d.out.toString();
                }
            }
            throw new IllegalArgumentException("pattern '" + shown(pattern) + "': no string of length " + minLength + ".."
                    + maxLength + " drawn in " + ATTEMPTS + " attempts");
        }
    }

    private final String pattern;
    private final SamplingBudget budget;
    private int pos;
    private int depth;

    private RegexSampler(String pattern, SamplingBudget budget) {
        this.pattern = pattern;
        this.budget = budget;
    }

    /** Parses {@code pattern}, each part counted against {@code budget}; refuses what it cannot draw from. */
    static Compiled compile(String pattern, SamplingBudget budget) {
        RegexSampler parser = new RegexSampler(pattern, budget);
        Node node = parser.alternation();
        if (parser.pos != pattern.length()) {
            throw parser.unsupported("unbalanced ')'");
        }
        return new Compiled(pattern, node);
    }

    /** A string matching {@code pattern} whose length is within [minLength, maxLength]. */
    static String sample(String pattern, SplitMix64 rng, int minLength, int maxLength, SamplingBudget budget) {
        return compile(pattern, budget).sample(rng, minLength, maxLength, budget);
    }

    private Node alternation() {
        List<Node> branches = new ArrayList<>();
        branches.add(sequence());
        while (pos < pattern.length() && pattern.charAt(pos) == '|') {
            pos++;
            branches.add(sequence());
        }
        if (branches.size() == 1) {
            return branches.get(0);
        }
        Node[] options = branches.toArray(new Node[0]);
        return d -> {
            d.budget.node();
            options[d.below(options.length)].emit(d);
        };
    }

    private Node sequence() {
        List<Node> parts = new ArrayList<>();
        while (pos < pattern.length() && pattern.charAt(pos) != '|' && pattern.charAt(pos) != ')') {
            budget.node();
            parts.add(quantified(atom()));
        }
        Node[] all = parts.toArray(new Node[0]);
        return d -> {
            for (Node p : all) {
                p.emit(d);
            }
        };
    }

    private Node atom() {
        char c = pattern.charAt(pos++);
        switch (c) {
            case '^', '$':
                return d -> d.budget.node();
            case '.':
                return PRINTABLE;
            case '[':
                return characterClass();
            case '(':
                return group();
            case '\\':
                return escape();
            case '*', '+', '?', '{':
                throw unsupported("a quantifier with nothing to repeat");
            default:
                return literal(c);
        }
    }

    private Node group() {
        if (pattern.startsWith("?:", pos)) {
            pos += 2;
        } else if (pos < pattern.length() && pattern.charAt(pos) == '?') {
            throw unsupported("lookaround or named groups");
        }
        if (++depth > MAX_NESTING) {
            throw new IllegalArgumentException("pattern '" + shown(pattern) + "': groups nested more than " + MAX_NESTING
                    + " deep, the mock's limit");
        }
        Node inner = alternation();
        depth--;
        if (pos >= pattern.length() || pattern.charAt(pos) != ')') {
            throw unsupported("unclosed '('");
        }
        pos++;
        return inner;
    }

    private static Node literal(char c) {
        return d -> d.append(c);
    }

    private Node escape() {
        if (pos >= pattern.length()) {
            throw unsupported("a trailing backslash");
        }
        char e = pattern.charAt(pos++);
        CharSet set = classEscape(e);
        if (set != null) {
            return set;
        }
        if (isDigit(e) && e != '0') {
            throw unsupported("back-references");
        }
        if (e == 'b' || e == 'B') {
            return d -> d.budget.node(); // word boundaries: the drawn text is not checked against them
        }
        return literal(literalEscape(e));
    }

    /** The characters of {@code \d \w \s} and their negations, or null for another escape. */
    private static CharSet classEscape(char e) {
        return switch (e) {
            case 'd' -> DIGITS;
            case 'w' -> WORD;
            case 's' -> SPACE;
            case 'D' -> DIGITS.negated();
            case 'W' -> WORD.negated();
            case 'S' -> SPACE.negated();
            default -> null;
        };
    }

    private char literalEscape(char e) {
        switch (e) {
            case 'n': return '\n';
            case 't': return '\t';
            case 'r': return '\r';
            case 'f': return '\f';
            case 'v': return '\u000B';
            case '0': return '\0';
            case 'u': return hex(4);
            case 'x': return hex(2);
            default: return e;
        }
    }

    /** The character of the {@code digits} hex digits at the cursor (a {@code \\u} or {@code \\x} escape). */
    private char hex(int digits) {
        int value = 0;
        for (int k = 0; k < digits; k++) {
            int v = pos < pattern.length() ? Character.digit(pattern.charAt(pos), 16) : -1;
            if (v < 0) {
                throw unsupported("a \\" + (digits == 4 ? 'u' : 'x') + " escape without " + digits + " hex digits");
            }
            value = value * 16 + v;
            pos++;
        }
        return (char) value;
    }

    private Node characterClass() {
        boolean negated = pos < pattern.length() && pattern.charAt(pos) == '^';
        if (negated) {
            pos++;
        }
        List<CharSet> members = new ArrayList<>();
        boolean first = true;
        while (pos < pattern.length() && (pattern.charAt(pos) != ']' || first)) {
            first = false;
            budget.node();
            char c = pattern.charAt(pos++);
            if (c == '\\') {
                if (pos >= pattern.length()) {
                    break; // answered below: the class is not closed
                }
                char e = pattern.charAt(pos++);
                CharSet cls = classEscape(e);
                if (cls != null) {
                    members.add(cls);
                    continue;
                }
                c = literalEscape(e);
            }
            if (pos + 1 < pattern.length() && pattern.charAt(pos) == '-' && pattern.charAt(pos + 1) != ']') {
                pos++;
                char hi = pattern.charAt(pos++);
                if (hi == '\\') {
                    if (pos >= pattern.length()) {
                        break;
                    }
                    hi = literalEscape(pattern.charAt(pos++));
                }
                if (hi < c) {
                    throw unsupported("a reversed range " + c + "-" + hi);
                }
                members.add(CharSet.range(c, hi));
            } else {
                members.add(CharSet.range(c, c));
            }
        }
        if (pos >= pattern.length()) {
            throw unsupported("an unclosed '['");
        }
        pos++;
        CharSet set = CharSet.union(members);
        if (negated) {
            set = set.negated();
        }
        set = set.withoutSurrogates(); // a lone surrogate is no character: drawn text stays well-formed
        if (set.size == 0) {
            throw unsupported("an empty character class");
        }
        return set;
    }

    private Node quantified(Node atom) {
        if (pos >= pattern.length()) {
            return atom;
        }
        int min;
        int max;
        char q = pattern.charAt(pos);
        int[] braces = q == '{' ? bounds() : null;
        if (q == '*' || q == '+' || q == '?') {
            pos++;
            min = q == '+' ? 1 : 0;
            max = q == '?' ? 1 : min + 3;
        } else if (braces != null) {
            min = braces[0];
            max = braces[1];
        } else {
            return atom;
        }
        if (pos < pattern.length() && pattern.charAt(pos) == '?') {
            pos++; // lazy: the same strings match
        }
        int lo = min;
        int span = (int) Math.min((long) max - min, SPARE_REPEATS) + 1;
        return d -> {
            d.budget.node();
            int n = lo + d.below(span);
            for (int i = 0; i < n; i++) {
                d.budget.node();
                atom.emit(d);
            }
        };
    }

    /**
     * The bounds of a {@code {n}}, {@code {n,}} or {@code {n,m}} at the cursor, which then moves past it; null (the
     * cursor left) when the brace starts no repetition. An unbounded maximum is the minimum plus three.
     */
    private int[] bounds() {
        int at = pos + 1;
        int digitsStart = at;
        while (at < pattern.length() && isDigit(pattern.charAt(at))) {
            at++;
        }
        if (at == digitsStart || at >= pattern.length()) {
            return null;
        }
        int digitsEnd = at;
        long min = count(digitsStart, at);
        long max = min;
        if (pattern.charAt(at) == ',') {
            int upperStart = ++at;
            while (at < pattern.length() && isDigit(pattern.charAt(at))) {
                at++;
            }
            max = at == upperStart ? min + 3 : count(upperStart, at);
        }
        if (at >= pattern.length() || pattern.charAt(at) != '}') {
            return null;
        }
        if (min > MAX_REPEAT) {
            String digits = pattern.substring(digitsStart, digitsEnd);
            throw new IllegalArgumentException("pattern '" + shown(pattern) + "': a repetition of at least "
                    + (digits.length() <= 12 ? digits : digits.substring(0, 12) + "...") + " is more than the mock draws ("
                    + MAX_REPEAT + ")");
        }
        if (max < min) {
            throw unsupported("a repetition {" + min + "," + max + "}");
        }
        pos = at + 1;
        return new int[] {(int) min, (int) Math.min(max, Integer.MAX_VALUE)};
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** The decimal number in pattern[from, to), saturated past what any bound needs. */
    private long count(int from, int to) {
        long v = 0;
        for (int k = from; k < to && v <= Integer.MAX_VALUE; k++) {
            v = v * 10 + (pattern.charAt(k) - '0');
        }
        return v;
    }

    private IllegalArgumentException unsupported(String what) {
        return new IllegalArgumentException("pattern '" + shown(pattern) + "': " + what + " is not supported");
    }

    /** A pattern as an error message quotes it: its first 100 characters. */
    private static String shown(String pattern) {
        return pattern.length() <= 100 ? pattern : pattern.substring(0, 100) + "...";
    }

    /**
     * A set of characters as sorted, disjoint ranges, drawn from uniformly by a binary search over the ranges' running
     * sizes: a class of 65,536 characters costs two arrays of one range, not a string of all of them.
     */
    private static final class CharSet implements Node {
        private final char[] lo;
        private final char[] hi;
        /** Characters in ranges 0..r, for r = 0..ranges-1. */
        private final int[] cumulative;
        final int size;

        private CharSet(char[] lo, char[] hi) {
            this.lo = lo;
            this.hi = hi;
            this.cumulative = new int[lo.length];
            int total = 0;
            for (int r = 0; r < lo.length; r++) {
                total += hi[r] - lo[r] + 1;
                cumulative[r] = total;
            }
            this.size = total;
        }

        static CharSet range(char from, char to) {
            return new CharSet(new char[] {from}, new char[] {to});
        }

        static CharSet of(String chars) {
            List<CharSet> each = new ArrayList<>();
            for (int i = 0; i < chars.length(); i++) {
                each.add(range(chars.charAt(i), chars.charAt(i)));
            }
            return union(each);
        }

        /** The union of {@code sets}: their ranges sorted, overlapping and adjacent ones merged. */
        static CharSet union(List<CharSet> sets) {
            int n = 0;
            for (CharSet s : sets) {
                n += s.lo.length;
            }
            long[] ranges = new long[n];
            int k = 0;
            for (CharSet s : sets) {
                for (int r = 0; r < s.lo.length; r++) {
                    ranges[k++] = ((long) s.lo[r] << 16) | s.hi[r];
                }
            }
            Arrays.sort(ranges);
            char[] lo = new char[n];
            char[] hi = new char[n];
            int m = 0;
            for (long range : ranges) {
                char from = (char) (range >>> 16);
                char to = (char) range;
                if (m > 0 && from <= hi[m - 1] + 1) {
                    hi[m - 1] = (char) Math.max(hi[m - 1], to);
                } else {
                    lo[m] = from;
                    hi[m] = to;
                    m++;
                }
            }
            return new CharSet(Arrays.copyOf(lo, m), Arrays.copyOf(hi, m));
        }

        /** This set less the surrogate code units (U+D800..U+DFFF). */
        CharSet withoutSurrogates() {
            List<CharSet> parts = new ArrayList<>();
            for (int r = 0; r < lo.length; r++) {
                if (lo[r] < Character.MIN_SURROGATE) {
                    parts.add(range(lo[r], (char) Math.min(hi[r], Character.MIN_SURROGATE - 1)));
                }
                if (hi[r] > Character.MAX_SURROGATE) {
                    parts.add(range((char) Math.max(lo[r], Character.MAX_SURROGATE + 1), hi[r]));
                }
            }
            return union(parts);
        }

        boolean contains(char c) {
            int r = Arrays.binarySearch(lo, c);
            r = r >= 0 ? r : -r - 2;
            return r >= 0 && c <= hi[r];
        }

        /** The printable ASCII characters not in this set. */
        CharSet negated() {
            StringBuilder rest = new StringBuilder();
            for (char c = ' '; c <= '~'; c++) {
                if (!contains(c)) {
                    rest.append(c);
                }
            }
            return rest.length() == 0 ? new CharSet(new char[0], new char[0]) : of(rest.toString());
        }

        @Override
        public void emit(Draw d) {
            d.budget.node();
            int k = d.below(size);
            int r = Arrays.binarySearch(cumulative, k + 1);
            r = r >= 0 ? r : -r - 1;
            d.append((char) (lo[r] + k - (r == 0 ? 0 : cumulative[r - 1])));
        }
    }
}
