package dev.infersim.cli;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A one-line error in our words: what Java's number parsing, its arithmetic and Jackson say when a flag's value or a
 * file holds something unexpected ({@code For input string: "99999999999"}, {@code Overflow}, {@code Non-standard token
 * 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow}, a source location dump) is said the way a user
 * of the command reads it; the rest of the message, which names the flag or file, stays as it is. Every error
 * {@link Main} prints passes here, so a new flag parsed with {@code Integer.parseInt} cannot bring Java's words back.
 */
final class JavaWords {
    private static final Pattern INPUT_STRING = Pattern.compile("For input string: \"([^\"]*)\"(?: under radix \\d+)?");
    private static final Pattern EMPTY_STRING = Pattern.compile("\\bempty String\\b");
    private static final Pattern OVERFLOW = Pattern.compile("\\b(?:Overflow|Underflow|BigInteger would overflow supported range|"
            + "integer overflow|long overflow)\\b");
    private static final Pattern DIGIT_MARK = Pattern.compile("Character (\\S+) is neither a decimal digit number, decimal "
            + "point, nor \"e\" notation exponential mark\\.");
    private static final Pattern NON_NUMERIC = Pattern.compile("Non-standard token '([^']+)': enable `[^`]+` to allow");
    private static final Pattern JACKSON_HINT = Pattern.compile(":? *\\(?(?:enable|set) `[A-Za-z.]+(?:\\.[A-Z_]+)?`[^)]*\\)?(?: to allow)?");
    private static final Pattern SOURCE = Pattern.compile("\\s*at \\[Source: [^\\]]*?; line: (\\d+), column: (\\d+)\\]");

    private JavaWords() {
    }

    static String ours(String message) {
        String m = INPUT_STRING.matcher(message).replaceAll(r -> Matcher.quoteReplacement(
                "'" + r.group(1) + "' is not a number, or not one within range"));
        m = EMPTY_STRING.matcher(m).replaceAll("an empty value is not a number");
        m = OVERFLOW.matcher(m).replaceAll("a number out of range");
        m = DIGIT_MARK.matcher(m).replaceAll(r -> Matcher.quoteReplacement("'" + r.group(1) + "' is not a digit of a number"));
        m = NON_NUMERIC.matcher(m).replaceAll(r -> Matcher.quoteReplacement("'" + r.group(1) + "' is not a JSON number"));
        m = JACKSON_HINT.matcher(m).replaceAll("");
        m = SOURCE.matcher(m).replaceAll(" (line $1, column $2)");
        return m;
    }
}
