package dev.infersim.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.infersim.cli.structure.ACommand;
import dev.infersim.cli.structure.a.CallsB;
import dev.infersim.cli.structure.b.CallsA;
import dev.infersim.cli.structure.fields.ReadsTally;
import dev.infersim.cli.structure.fields.Tally;
import dev.infersim.cli.structure.options.UsesACommand;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sub-packages inside each top-level package (the module READMEs' Layout sections): per family, each package
 * (that package alone) and the packages of its family it may use, so that they form a line with no cycle; every
 * package of a family is listed. The engine's scheduler is its plug point and a step's timing only prices the batch.
 */
class SubPackageStructureTest {
    private static final JavaClasses MAIN = ClassGraph.mainClasses();

    /** Per family (a top-level package), each of its packages and the others of the family it may use, relative names. */
    private static final Map<String, Map<String, List<String>>> FAMILIES = families();

    private static Map<String, Map<String, List<String>>> families() {
        Map<String, Map<String, List<String>>> f = new LinkedHashMap<>();
        // simulator: engine.calibration -> engine -> engine.profile; workload over its two leaves
        f.put("engine", Map.of(
                "engine.profile", List.of(),
                "engine", List.of("engine.profile"),
                "engine.calibration", List.of("engine", "engine.profile")));
        f.put("workload", Map.of(
                "workload.arrival", List.of(),
                "workload.length", List.of(),
                "workload", List.of("workload.arrival", "workload.length")));
        // mock-server, bottom to top
        Map<String, List<String>> server = new LinkedHashMap<>();
        server.put("server.json", List.of());
        server.put("server.observe", List.of("server.json"));
        server.put("server.text", List.of("server.json"));
        server.put("server.config", List.of("server.json", "server.observe", "server.text"));
        server.put("server.output", List.of("server.json", "server.text", "server.config"));
        server.put("server.kv", List.of("server.config"));
        server.put("server.http", List.of("server.json", "server.config"));
        server.put("server.engine", List.of("server.json", "server.observe", "server.config", "server.output",
                "server.kv"));
        server.put("server.request", List.of("server.json", "server.text", "server.config", "server.output",
                "server.engine"));
        server.put("server.model", List.of("server.json", "server.observe", "server.text", "server.config",
                "server.output", "server.engine", "server.request"));
        server.put("server.api.openai", List.of("server.json", "server.text", "server.config", "server.output",
                "server.http", "server.engine", "server.request", "server.model"));
        server.put("server.api.anthropic", List.of("server.json", "server.output", "server.engine", "server.request",
                "server.model", "server.api.openai"));
        server.put("server.api.responses", List.of("server.json", "server.config", "server.output", "server.http",
                "server.engine", "server.request", "server.model", "server.api.openai"));
        server.put("server.api.embeddings", List.of("server.json", "server.config", "server.engine", "server.request",
                "server.model", "server.api.openai"));
        server.put("server.api.tokens", List.of("server.json", "server.output", "server.engine", "server.request",
                "server.model"));
        server.put("server.grpc", List.of());
        server.put("server.routes", List.of("server.json", "server.observe", "server.text", "server.config",
                "server.output", "server.http", "server.engine", "server.request", "server.model", "server.api.openai",
                "server.api.anthropic", "server.api.responses", "server.api.embeddings", "server.api.tokens",
                "server.grpc"));
        server.put("server.fleet", List.of("server.json", "server.observe", "server.text", "server.config",
                "server.http", "server.engine", "server.model", "server.routes"));
        f.put("server", server);
        // benchmark-client: report -> run -> measure -> config, harness -> measure; the entry point above them all
        Map<String, List<String>> bench = new LinkedHashMap<>();
        bench.put("bench.config", List.of());
        bench.put("bench.measure", List.of("bench.config"));
        bench.put("bench.run", List.of("bench.config", "bench.measure"));
        bench.put("bench.report", List.of("bench.config", "bench.measure", "bench.run"));
        bench.put("bench.harness", List.of("bench.measure"));
        bench.put("bench", List.of("bench.config", "bench.measure", "bench.run", "bench.report", "bench.harness"));
        f.put("bench", bench);
        // cli: the flags the commands share, below the commands
        f.put("cli", Map.of("cli.options", List.of(), "cli", List.of("cli.options")));
        return f;
    }

    private static String full(String relative) {
        return "dev.infersim." + relative;
    }

    private static ArchRule usesOnly(String family, String from, List<String> allowed) {
        return ClassGraph.usesOnlyWithin(full(family), full(from), allowed.stream().map(SubPackageStructureTest::full).toList());
    }

    @Test
    void everyPackageUsesOnlyThoseBelowItInItsFamily() {
        FAMILIES.forEach((family, packages) -> packages.forEach((from, allowed) ->
                usesOnly(family, from, allowed).check(MAIN)));
    }

    @Test
    void noCycleBetweenThePackagesOfAFamily() {
        ClassGraph.noCycleBetweenPackagesUnder(FAMILIES.keySet().stream().map(SubPackageStructureTest::full)
                .toArray(String[]::new)).check(MAIN);
    }

    @Test
    void everyPackageOfAFamilyHasItsPlaceInTheList() {
        FAMILIES.forEach((family, packages) -> {
            List<String> found = MAIN.stream().filter(c -> ClassGraph.under(c, full(family)))
                    .filter(c -> !c.getSimpleName().equals("package-info"))
                    .map(c -> c.getPackageName().substring("dev.infersim.".length())).distinct().sorted().toList();
            assertEquals(packages.keySet().stream().sorted().toList(), found,
                    "a new package of dev.infersim." + family + " needs its allowed dependencies in " + getClass().getSimpleName());
        });
    }

    /** The scheduler plans, the timing prices (vLLM V1's SchedulerInterface): neither uses the other's side. */
    private static ArchRule timingUsesNoScheduler(String... timings) {
        return noClasses().that().haveFullyQualifiedName(timings[0]).or().haveFullyQualifiedName(timings[1])
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.Scheduler")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.VllmScheduler")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.BatchState");
    }

    @Test
    void theEngineSchedulesAndItsTimingPrices() {
        timingUsesNoScheduler("dev.infersim.engine.StepTiming", "dev.infersim.engine.CostModelTiming").check(MAIN);
        noClasses().that().haveFullyQualifiedName("dev.infersim.engine.Scheduler")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.StepTiming").check(MAIN);
    }

    /**
     * The client's measurements are handed on, never reached into: each lane's exchange hands an immutable outcome to
     * its own recorder, the run's thread alone records it into a window, and the report asks the window.
     */
    @Test
    void theBenchmarkClientReadsNoOtherClassesFields() {
        ClassGraph.touchOnlyTheirOwnFields("dev.infersim.bench").check(MAIN);
    }

    /**
     * The rules find what they forbid: the fixture packages' cycle, options that use a command, engine's use of
     * engine.profile when it may use nothing, the fixed-latency scheduler (its own timing) using the scheduler's state, a
     * class reading another's mutable field (and not a class reading its own, its nested class's or a constant).
     */
    @Test
    void theRulesReportWhatTheyForbid() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(ClassGraph.noCycleBetweenPackagesUnder("dev.infersim.cli.structure").evaluate(cycle).hasViolation());
        JavaClasses options = new ClassFileImporter().importClasses(UsesACommand.class, UsesACommand.Nested.class,
                ACommand.class);
        assertTrue(ClassGraph.usesOnlyWithin("dev.infersim.cli.structure", "dev.infersim.cli.structure.options",
                List.of()).evaluate(options).hasViolation());
        assertTrue(usesOnly("engine", "engine", List.of()).evaluate(MAIN).hasViolation());
        assertTrue(timingUsesNoScheduler("dev.infersim.engine.StepTiming", "dev.infersim.engine.FixedLatencyScheduler")
                .evaluate(MAIN).hasViolation());
        JavaClasses fields = new ClassFileImporter().importClasses(Tally.class, Tally.Part.class, ReadsTally.class);
        EvaluationResult read = ClassGraph.touchOnlyTheirOwnFields("dev.infersim.cli.structure.fields").evaluate(fields);
        assertEquals(1, read.getFailureReport().getDetails().size(), read.getFailureReport().toString());
        assertTrue(read.getFailureReport().getDetails().get(0).contains("ReadsTally.read(")
                && read.getFailureReport().getDetails().get(0).contains("Tally.count"), read.getFailureReport().toString());
    }
}
