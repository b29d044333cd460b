package dev.infersim.bench.measure;

/**
 * Text a server sent, made safe to print on a terminal: control characters (C0 and C1, ESC and carriage return among
 * them, which a hostile endpoint could use to move the cursor, rewrite earlier lines or set the window title) and
 * Unicode format characters (bidirectional overrides, which reorder what is shown) are written as escapes,
 * {@code \x1b} or {@code \u202e}, so the message stays readable and nothing in it acts on the terminal.
 */
public final class TerminalText {
    private TerminalText() {
    }

    public static String printable(String s) {
        if (s == null) {
            return null;
        }
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            int type = Character.getType(c);
            if (type == Character.CONTROL || type == Character.FORMAT) {
                if (b == null) {
                    b = new StringBuilder(s.length() + 16).append(s, 0, i);
                }
                b.append(c < 0x100 ? String.format("\\x%02x", (int) c) : String.format("\\u%04x", (int) c));
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? s : b.toString();
    }
}
