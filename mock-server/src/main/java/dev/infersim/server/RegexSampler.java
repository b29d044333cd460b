package dev.infersim.server;

import dev.infersim.common.SplitMix64;

import java.util.ArrayList;
import java.util.List;

/**
 * Draws a string that a JSON Schema {@code pattern} (an ECMA-262 regular expression) matches: literals, {@code .},
 * character classes with ranges and negation, the escapes {@code \d \w \s} and their negations, groups (capturing or
 * {@code (?:...)}), alternation and the quantifiers {@code ? * + {n} {n,} {n,m}} (lazy or not). Anchors are accepted
 * and need nothing: the whole drawn string matches. Lookaround and back-references are refused with
 * {@link IllegalArgumentException}, as no string can be drawn for them without a search. Unbounded repetition draws at
 * most three more than its minimum.
 */
final class RegexSampler {
    /** Printable ASCII: what {@code .} and negated classes draw from. */
    private static final String PRINTABLE;
    static {
        StringBuilder b = new StringBuilder();
        for (char c = ' '; c <= '~'; c++) {
            b.append(c);
        }
        PRINTABLE = b.toString();
    }

    private static final String DIGITS = "0123456789";
    private static final String WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    private static final String SPACE = " \t";
    private static final int ATTEMPTS = 64;

    private interface Node {
        void emit(SplitMix64 rng, StringBuilder out);
    }

    private final String pattern;
    private int pos;

    private RegexSampler(String pattern) {
        this.pattern = pattern;
    }

    /** A string matching {@code pattern} whose length is within [minLength, maxLength]. */
    static String sample(String pattern, SplitMix64 rng, int minLength, int maxLength) {
        RegexSampler parser = new RegexSampler(pattern);
        Node node = parser.alternation();
        if (parser.pos != pattern.length()) {
            throw parser.unsupported("unbalanced ')'");
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            StringBuilder out = new StringBuilder();
            node.emit(rng, out);
            int n = out.codePointCount(0, out.length());
            if (n >= minLength && n <= maxLength) {
                return out.toString();
            }
        }
        throw new IllegalArgumentException("pattern '" + pattern + "': no string of length " + minLength + ".." + maxLength
                + " drawn in " + ATTEMPTS + " attempts");
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
        return (rng, out) -> branches.get(Math.floorMod(rng.nextLong(), branches.size())).emit(rng, out);
    }

    private Node sequence() {
        List<Node> parts = new ArrayList<>();
        while (pos < pattern.length() && pattern.charAt(pos) != '|' && pattern.charAt(pos) != ')') {
            Node atom = atom();
            parts.add(quantified(atom));
        }
        return (rng, out) -> {
            for (Node p : parts) {
                p.emit(rng, out);
            }
        };
    }

    private Node atom() {
        char c = pattern.charAt(pos++);
        switch (c) {
            case '^', '$':
                return (rng, out) -> { };
            case '.':
                return chars(PRINTABLE);
            case '[':
                return characterClass();
            case '(':
                if (pattern.startsWith("?:", pos)) {
                    pos += 2;
                } else if (pos < pattern.length() && pattern.charAt(pos) == '?') {
                    throw unsupported("lookaround or named groups");
                }
                Node inner = alternation();
                if (pos >= pattern.length() || pattern.charAt(pos) != ')') {
                    throw unsupported("unclosed '('");
                }
                pos++;
                return inner;
            case '\\':
                return escape();
            case '*', '+', '?', '{':
                throw unsupported("a quantifier with nothing to repeat");
            default:
                return (rng, out) -> out.append(c);
        }
    }

    private Node escape() {
        if (pos >= pattern.length()) {
            throw unsupported("a trailing backslash");
        }
        char e = pattern.charAt(pos++);
        String set = classEscape(e);
        if (set != null) {
            return chars(set);
        }
        if (Character.isDigit(e) && e != '0') {
            throw unsupported("back-references");
        }
        if (e == 'b' || e == 'B') {
            return (rng, out) -> { }; // word boundaries: the drawn text is not checked against them
        }
        char literal = literalEscape(e);
        return (rng, out) -> out.append(literal);
    }

    /** The characters of {@code \d \w \s} and their negations, or null for another escape. */
    private static String classEscape(char e) {
        return switch (e) {
            case 'd' -> DIGITS;
            case 'w' -> WORD;
            case 's' -> SPACE;
            case 'D' -> without(DIGITS);
            case 'W' -> without(WORD);
            case 'S' -> without(SPACE);
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
            case 'u':
                if (pos + 4 > pattern.length()) {
                    throw unsupported("a short \\u escape");
                }
                char u = (char) Integer.parseInt(pattern.substring(pos, pos + 4), 16);
                pos += 4;
                return u;
            case 'x':
                if (pos + 2 > pattern.length()) {
                    throw unsupported("a short \\x escape");
                }
                char x = (char) Integer.parseInt(pattern.substring(pos, pos + 2), 16);
                pos += 2;
                return x;
            default:
                return e;
        }
    }

    private Node characterClass() {
        boolean negated = pos < pattern.length() && pattern.charAt(pos) == '^';
        if (negated) {
            pos++;
        }
        StringBuilder set = new StringBuilder();
        boolean first = true;
        while (pos < pattern.length() && (pattern.charAt(pos) != ']' || first)) {
            first = false;
            char c = pattern.charAt(pos++);
            if (c == '\\') {
                char e = pattern.charAt(pos++);
                String cls = classEscape(e);
                if (cls != null) {
                    set.append(cls);
                    continue;
                }
                c = literalEscape(e);
            }
            if (pos + 1 < pattern.length() && pattern.charAt(pos) == '-' && pattern.charAt(pos + 1) != ']') {
                pos++;
                char hi = pattern.charAt(pos++);
                if (hi == '\\') {
                    hi = literalEscape(pattern.charAt(pos++));
                }
                if (hi < c) {
                    throw unsupported("a reversed range " + c + "-" + hi);
                }
                for (char r = c; r <= hi; r++) {
                    set.append(r);
                }
            } else {
                set.append(c);
            }
        }
        if (pos >= pattern.length()) {
            throw unsupported("an unclosed '['");
        }
        pos++;
        String members = negated ? without(set.toString()) : set.toString();
        if (members.isEmpty()) {
            throw unsupported("an empty character class");
        }
        return chars(members);
    }

    private Node quantified(Node atom) {
        if (pos >= pattern.length()) {
            return atom;
        }
        int min;
        int max;
        char q = pattern.charAt(pos);
        if (q == '*' || q == '+' || q == '?') {
            pos++;
            min = q == '+' ? 1 : 0;
            max = q == '?' ? 1 : min + 3;
        } else if (q == '{' && pattern.indexOf('}', pos) > pos && pattern.substring(pos + 1, pattern.indexOf('}', pos)).matches("\\d+(,\\d*)?")) {
            int close = pattern.indexOf('}', pos);
            String[] bounds = pattern.substring(pos + 1, close).split(",", -1);
            min = Integer.parseInt(bounds[0]);
            max = bounds.length == 1 ? min : bounds[1].isEmpty() ? min + 3 : Integer.parseInt(bounds[1]);
            if (max < min) {
                throw unsupported("a repetition {" + min + "," + max + "}");
            }
            pos = close + 1;
        } else {
            return atom;
        }
        if (pos < pattern.length() && pattern.charAt(pos) == '?') {
            pos++; // lazy: the same strings match
        }
        int lo = min;
        int span = max - min + 1;
        return (rng, out) -> {
            int n = lo + Math.floorMod(rng.nextLong(), span);
            for (int i = 0; i < n; i++) {
                atom.emit(rng, out);
            }
        };
    }

    private static Node chars(String set) {
        return (rng, out) -> out.append(set.charAt(Math.floorMod(rng.nextLong(), set.length())));
    }

    /** Printable ASCII characters not in {@code set}. */
    private static String without(String set) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < PRINTABLE.length(); i++) {
            if (set.indexOf(PRINTABLE.charAt(i)) < 0) {
                b.append(PRINTABLE.charAt(i));
            }
        }
        return b.toString();
    }

    private IllegalArgumentException unsupported(String what) {
        return new IllegalArgumentException("pattern '" + pattern + "': " + what + " is not supported");
    }
}
