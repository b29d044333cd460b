package dev.infersim.cli;

import picocli.CommandLine;

/** Reports the version recorded in the jar's manifest (the Maven project version). */
public final class Version implements CommandLine.IVersionProvider {

    /** The running version, or {@code dev} when run from classes rather than the jar. */
    public static String current() {
        String v = Version.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    @Override
    public String[] getVersion() {
        return new String[] {"infersim " + current()};
    }
}
