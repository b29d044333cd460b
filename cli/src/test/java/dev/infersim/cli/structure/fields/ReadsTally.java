package dev.infersim.cli.structure.fields;

/** Reads another class's mutable field, which the measurement path's rule must report; its constant is allowed. */
public final class ReadsTally {
    public static long read(Tally t) {
        return t.count + Tally.LIMIT;
    }
}
