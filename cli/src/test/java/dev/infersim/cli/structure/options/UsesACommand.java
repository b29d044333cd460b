package dev.infersim.cli.structure.options;

import dev.infersim.cli.structure.ACommand;

/**
 * Options that use a command above them, which PackageStructureTest's options rule must report; its nested class is not
 * counted as one of the package's classes.
 */
public final class UsesACommand {
    public static int viaCommand() {
        return ACommand.value() + new Nested().one();
    }

    /** Nested: counted with its top-level class, not on its own. */
    public static final class Nested {
        int one() {
            return 1;
        }
    }
}
