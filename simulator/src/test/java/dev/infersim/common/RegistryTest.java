package dev.infersim.common;

import dev.infersim.engine.SchedulingPolicies;
import dev.infersim.sim.Autoscalers;
import dev.infersim.sim.Routers;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** One registry for routers, scheduling policies and autoscalers: each name declared once, the lists drawn from it. */
class RegistryTest {

    @Test
    void namesAreListedInDeclarationOrderAndAliasesAndSpellingsAccepted() {
        Registry<Integer, String> r = new Registry<Integer, String>("--shape", "shape")
                .register("square", n -> "square " + n)
                .register("round-thing", n -> "round " + n, "circle");
        assertEquals(List.of("square", "round-thing"), r.names());
        assertEquals("round 3", r.create("circle", 3));
        assertEquals("round 4", r.create("ROUND_THING", 4));
        ConfigException e = assertThrows(ConfigException.class, () -> r.create("triangle", 1));
        assertEquals("--shape: unknown shape 'triangle'; use one of square, round-thing", e.getMessage());
        assertThrows(IllegalStateException.class, () -> r.register("circle", n -> "again"));
    }

    @Test
    void everyListedNameOfTheThreeRegistriesMakesOne() {
        for (String name : Routers.names()) {
            assertEquals(false, Routers.byName(name, 1) == null, name);
        }
        for (String name : SchedulingPolicies.names()) {
            assertEquals(name, SchedulingPolicies.byName(name).name());
        }
        for (String name : Autoscalers.names()) {
            assertThrows(RuntimeException.class, () -> Autoscalers.byName("no-" + name, null));
        }
        assertEquals(List.of("round-robin", "least-outstanding-requests", "least-kv-usage", "power-of-two-choices",
                "prefix-affinity", "lora-affinity"), Routers.names());
        assertEquals(List.of("fcfs", "priority"), SchedulingPolicies.names());
        assertEquals(List.of("hpa"), Autoscalers.names());
    }
}
