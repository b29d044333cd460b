package dev.infersim.cli.structure;

/** A command that PackageStructureTest's options rule fixture uses from below (see {@code options.UsesACommand}). */
public final class ACommand {
    public static int value() {
        return 1;
    }
}
