package dev.infersim.cli.structure.fields;

/** A class with a mutable field open to others, as the client's measured window had: read by {@link ReadsTally}. */
public final class Tally {
    public static final int LIMIT = 5;
    public long count;
    private final Part part = new Part();

    /** Reads its own fields and its nested class's: allowed. */
    public long total() {
        return count + part.extra + LIMIT;
    }

    public static final class Part {
        long extra;
    }
}
