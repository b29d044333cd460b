package dev.infersim.cli.structure.b;

import dev.infersim.cli.structure.a.CallsB;

/** The other half of the deliberate package cycle PackageStructureTest's cycle rule must report. */
public final class CallsA {
    public static int viaA() {
        return CallsB.value() + 1;
    }

    public static int value() {
        return 2;
    }
}
