package dev.infersim.cli.structure.a;

import dev.infersim.cli.structure.b.CallsA;

/** Half of a deliberate package cycle (with {@link CallsA}) that PackageStructureTest's cycle rule must report. */
public final class CallsB {
    public static int viaB() {
        return CallsA.value() + 1;
    }

    public static int value() {
        return 1;
    }
}
