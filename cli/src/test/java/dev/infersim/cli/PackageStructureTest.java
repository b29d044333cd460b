package dev.infersim.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import dev.infersim.cli.structure.a.CallsB;
import dev.infersim.cli.structure.b.CallsA;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The package structure of the main code (docs in the root README's Layout and the module READMEs), read from the
 * compiled classes with ArchUnit: no package cycle, and each package depends only on the infersim packages listed
 * here. Inside simulator the packages form a line, {@code sim -> result -> workload -> common} with
 * {@code engine -> common}; the benchmark client is a client for real servers, so it uses only the workload and the
 * result schema and never the engine or the mock server (in code, and in its pom outside test scope). Inside it, the
 * sub-packages form a line too, {@code report -> run -> measure -> config} with {@code harness -> measure}, none using
 * the root package (its entry point), each of at most 40 classes, with no class-level cycle of more than 5 classes.
 */
class PackageStructureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.infersim");

    /** Each package and the other infersim packages it may use. */
    private static final Map<String, List<String>> ALLOWED = allowed();

    private static Map<String, List<String>> allowed() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("common", List.of());
        m.put("engine", List.of("common"));
        m.put("workload", List.of("common"));
        m.put("result", List.of("common", "workload"));
        m.put("sim", List.of("common", "engine", "workload", "result"));
        m.put("queueing", List.of());
        m.put("prediction", List.of("common", "engine", "workload", "result", "queueing"));
        m.put("server", List.of("common", "engine", "workload", "result", "sim"));
        m.put("bench", List.of("common", "workload", "result"));
        m.put("cli", List.of("common", "engine", "workload", "result", "sim", "queueing", "prediction", "server", "bench"));
        return m;
    }

    private static ArchRule noCycles(String packagesPattern) {
        return SlicesRuleDefinition.slices().matching(packagesPattern).should().beFreeOfCycles();
    }

    /** Classes of dev.infersim.{@code from} use no infersim class outside {@code from} and {@code allowed}. */
    private static ArchRule usesOnly(String from, List<String> allowed) {
        List<String> packages = new ArrayList<>();
        packages.add("dev.infersim." + from + "..");
        allowed.forEach(p -> packages.add("dev.infersim." + p + ".."));
        return classes().that().resideInAPackage("dev.infersim." + from + "..")
                .should().onlyDependOnClassesThat(JavaClass.Predicates.resideOutsideOfPackage("dev.infersim..")
                        .or(JavaClass.Predicates.resideInAnyPackage(packages.toArray(String[]::new))))
                .because("dev.infersim." + from + " may use only " + allowed);
    }

    @Test
    void mainCodeHasNoPackageCycle() {
        noCycles("dev.infersim.(*)..").check(MAIN);
    }

    @Test
    void everyPackageUsesOnlyThePackagesBelowIt() {
        for (Map.Entry<String, List<String>> e : ALLOWED.entrySet()) {
            usesOnly(e.getKey(), e.getValue()).check(MAIN);
        }
    }

    @Test
    void everyMainPackageHasItsPlaceInTheList() {
        List<String> found = MAIN.stream().map(c -> c.getPackageName().substring("dev.infersim.".length()).split("\\.")[0])
                .distinct().sorted().toList();
        assertEquals(ALLOWED.keySet().stream().sorted().toList(), found,
                "a new package needs its allowed dependencies in PackageStructureTest");
    }

    // The simulator module's sub-packages (issue 36): engine and workload split where their seams are. Each package
    // (exactly that package, not the ones under it) and the packages of its own family it may use; common and the
    // top-level line are the rules above. engine.calibration -> engine -> engine.profile, and workload's arrival
    // processes and length laws are leaves under it.

    /** Each simulator package below engine or workload and the others of its family it may use, besides itself. */
    private static final Map<String, List<String>> SIMULATOR_SUB_PACKAGES = simulatorSubPackages();
    /** The simulator module's packages, each holding at most {@link #SIMULATOR_MAX_CLASSES} top-level classes. */
    private static final List<String> SIMULATOR_PACKAGE_ROOTS = List.of("common", "engine", "workload", "result", "sim");
    private static final int SIMULATOR_MAX_CLASSES = 40;
    /** The largest group of simulator classes that may reach each other through their dependencies. */
    private static final int SIMULATOR_MAX_CYCLE_GROUP = 5;

    private static Map<String, List<String>> simulatorSubPackages() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("engine.profile", List.of());
        m.put("engine", List.of("engine.profile"));
        m.put("engine.calibration", List.of("engine", "engine.profile"));
        m.put("workload.arrival", List.of());
        m.put("workload.length", List.of());
        m.put("workload", List.of("workload.arrival", "workload.length"));
        return m;
    }

    /** Classes of exactly dev.infersim.{@code from} use, of their family's packages, only {@code from} and {@code allowed}. */
    private static ArchRule simulatorSubPackageUsesOnly(String from, List<String> allowed) {
        String family = "dev.infersim." + from.split("\\.")[0];
        List<String> packages = new ArrayList<>();
        packages.add("dev.infersim." + from);
        allowed.forEach(p -> packages.add("dev.infersim." + p));
        return classes().that().resideInAPackage("dev.infersim." + from)
                .should().onlyDependOnClassesThat(JavaClass.Predicates.resideOutsideOfPackage(family + "..")
                        .or(JavaClass.Predicates.resideInAnyPackage(packages.toArray(String[]::new))))
                .because("dev.infersim." + from + " may use, of " + family + "'s packages, only " + allowed);
    }

    /** No cycle between the packages (each one exactly, the top of a family included) under the given ones. */
    private static ArchRule noCycleBetweenPackagesUnder(String... families) {
        return SlicesRuleDefinition.slices().assignedFrom(new com.tngtech.archunit.library.dependencies.SliceAssignment() {
            @Override
            public com.tngtech.archunit.library.dependencies.SliceIdentifier getIdentifierOf(JavaClass c) {
                for (String f : families) {
                    if (c.getPackageName().equals(f) || c.getPackageName().startsWith(f + ".")) {
                        return com.tngtech.archunit.library.dependencies.SliceIdentifier.of(c.getPackageName());
                    }
                }
                return com.tngtech.archunit.library.dependencies.SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "the packages under " + List.of(families);
            }
        }).should().beFreeOfCycles();
    }

    /** Each package under {@code roots} (dev.infersim.X and below) holding more than {@code limit} top-level classes. */
    private static Map<String, Long> packagesOver(JavaClasses classes, List<String> roots, int limit) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        classes.stream().filter(JavaClass::isTopLevelClass).filter(c -> !c.getSimpleName().equals("package-info"))
                .filter(c -> roots.stream().anyMatch(r -> c.getPackageName().equals("dev.infersim." + r)
                        || c.getPackageName().startsWith("dev.infersim." + r + ".")))
                .forEach(c -> counts.merge(c.getPackageName(), 1L, Long::sum));
        counts.values().removeIf(n -> n <= limit);
        return counts;
    }

    /**
     * The groups of more than {@code limit} top-level classes under {@code roots} that reach each other through their
     * dependencies (strongly connected components, Tarjan's algorithm; a nested class counts as its top-level class).
     */
    private static List<List<String>> classCycleGroupsOver(JavaClasses classes, List<String> roots, int limit) {
        Map<String, java.util.Set<String>> graph = new java.util.TreeMap<>();
        java.util.function.Predicate<JavaClass> inRoots = c -> roots.stream().anyMatch(r ->
                c.getPackageName().equals("dev.infersim." + r) || c.getPackageName().startsWith("dev.infersim." + r + "."));
        java.util.function.Function<JavaClass, String> top = c -> {
            JavaClass t = c;
            while (t.getEnclosingClass().isPresent()) {
                t = t.getEnclosingClass().get();
            }
            return t.getName();
        };
        classes.stream().filter(inRoots).forEach(c -> {
            java.util.Set<String> to = graph.computeIfAbsent(top.apply(c), k -> new java.util.TreeSet<>());
            c.getDirectDependenciesFromSelf().stream().map(d -> d.getTargetClass().getBaseComponentType())
                    .filter(inRoots).map(top).filter(t -> !t.equals(top.apply(c))).forEach(to::add);
        });
        graph.values().forEach(to -> to.forEach(t -> graph.computeIfAbsent(t, k -> new java.util.TreeSet<>())));
        Map<String, Integer> index = new java.util.HashMap<>();
        Map<String, Integer> low = new java.util.HashMap<>();
        java.util.Deque<String> stack = new java.util.ArrayDeque<>();
        java.util.Set<String> onStack = new java.util.HashSet<>();
        List<List<String>> groups = new ArrayList<>();
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                strongConnect(v, graph, index, low, stack, onStack, groups);
            }
        }
        groups.removeIf(g -> g.size() <= limit);
        return groups;
    }

    private static void strongConnect(String v, Map<String, java.util.Set<String>> graph, Map<String, Integer> index,
                                      Map<String, Integer> low, java.util.Deque<String> stack,
                                      java.util.Set<String> onStack, List<List<String>> groups) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        onStack.add(v);
        for (String w : graph.get(v)) {
            if (!index.containsKey(w)) {
                strongConnect(w, graph, index, low, stack, onStack, groups);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> group = new ArrayList<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                group.add(w);
            } while (!w.equals(v));
            groups.add(group);
        }
    }

    @Test
    void simulatorSubPackagesUseOnlyThePackagesBelowThem() {
        for (Map.Entry<String, List<String>> e : SIMULATOR_SUB_PACKAGES.entrySet()) {
            simulatorSubPackageUsesOnly(e.getKey(), e.getValue()).check(MAIN);
        }
        noCycleBetweenPackagesUnder("dev.infersim.engine", "dev.infersim.workload").check(MAIN);
    }

    @Test
    void everySimulatorSubPackageHasItsPlaceInTheList() {
        List<String> found = MAIN.stream().map(JavaClass::getPackageName)
                .filter(p -> p.startsWith("dev.infersim.engine") || p.startsWith("dev.infersim.workload"))
                .map(p -> p.substring("dev.infersim.".length())).distinct().sorted().toList();
        assertEquals(SIMULATOR_SUB_PACKAGES.keySet().stream().sorted().toList(), found,
                "a new engine or workload package needs its allowed dependencies in PackageStructureTest");
    }

    @Test
    void noSimulatorPackageHoldsMoreThanFortyClasses() {
        assertEquals(Map.of(), packagesOver(MAIN, SIMULATOR_PACKAGE_ROOTS, SIMULATOR_MAX_CLASSES),
                "split a package along its seams");
    }

    /**
     * One group is larger today, and may not grow: the length laws, an interface whose parser and JSON deserializer
     * name its laws, each of which implements it (7 classes of workload.length; breaking it moves
     * {@code LengthDistribution.parse} and the deserializer's annotation out of the interface).
     */
    @Test
    void noSimulatorClassCycleGroupIsLargerThanFiveButTheLengthLaws() {
        List<List<String>> groups = classCycleGroupsOver(MAIN, SIMULATOR_PACKAGE_ROOTS, SIMULATOR_MAX_CYCLE_GROUP);
        groups.removeIf(g -> g.size() <= 7 && g.stream().allMatch(c -> c.startsWith("dev.infersim.workload.length.")));
        assertEquals(List.of(), groups);
    }

    /**
     * The scheduler is the engine's plug point (vLLM V1's SchedulerInterface) and a step's timing only prices the batch
     * it planned: the timing interface and the cost model's timing use no scheduler, and the scheduler interface no
     * timing.
     */
    private static ArchRule stepTimingPricesOnlyThePlan(String timing, String costModelTiming) {
        return com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
                .that().haveFullyQualifiedName(timing).or().haveFullyQualifiedName(costModelTiming)
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.Scheduler")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.VllmScheduler")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.BatchState");
    }

    @Test
    void theEngineSchedulesAndItsTimingPrices() {
        stepTimingPricesOnlyThePlan("dev.infersim.engine.StepTiming", "dev.infersim.engine.CostModelTiming").check(MAIN);
        com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
                .that().haveFullyQualifiedName("dev.infersim.engine.Scheduler")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.infersim.engine.StepTiming").check(MAIN);
    }

    /**
     * The simulator's rules find what they forbid: the fixture packages' cycle (as packages and as a group of classes),
     * engine's use of engine.profile when it may use nothing, today's engine package under a lower cap, today's groups
     * of classes under a lower limit, a timing that uses the scheduler's state.
     */
    @Test
    void theSimulatorRulesReportWhatTheyForbid() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(noCycleBetweenPackagesUnder("dev.infersim.cli.structure").evaluate(cycle).hasViolation());
        assertTrue(simulatorSubPackageUsesOnly("engine", List.of()).evaluate(MAIN).hasViolation());
        assertTrue(packagesOver(MAIN, SIMULATOR_PACKAGE_ROOTS, 30).containsKey("dev.infersim.engine"));
        assertTrue(classCycleGroupsOver(cycle, List.of("cli.structure"), 1).stream()
                .anyMatch(g -> g.contains(CallsA.class.getName()) && g.contains(CallsB.class.getName())));
        assertTrue(classCycleGroupsOver(MAIN, SIMULATOR_PACKAGE_ROOTS, 3).stream().anyMatch(g -> g.size() > 3));
        // the fixed-latency scheduler is its own timing, and uses the scheduler's state
        assertTrue(stepTimingPricesOnlyThePlan("dev.infersim.engine.StepTiming",
                "dev.infersim.engine.FixedLatencyScheduler").evaluate(MAIN).hasViolation());
    }

    @Test
    void benchmarkClientNeedsTheMockServerOnlyInItsTests() throws Exception {
        Path pom = Path.of("..", "benchmark-client", "pom.xml");
        NodeList deps = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
                .getElementsByTagName("dependency");
        List<String> offending = new ArrayList<>();
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            String artifact = text(d, "artifactId");
            if (artifact.equals("mock-server") && !text(d, "scope").equals("test")) {
                offending.add(artifact + " in scope '" + text(d, "scope") + "'");
            }
        }
        assertTrue(offending.isEmpty(), pom + " depends on " + offending);
    }

    private static String text(Element e, String tag) {
        NodeList n = e.getElementsByTagName(tag);
        return n.getLength() == 0 ? "" : n.item(0).getTextContent().trim();
    }

    // The benchmark client's sub-packages (issue 36): each uses only those below it, none the root package (the entry
    // point, BenchmarkClient), no package over MAX_CLASSES_PER_PACKAGE classes, no class-level cycle over MAX_CYCLE_GROUP.

    /** Each sub-package of dev.infersim.bench and the other sub-packages of it that it may use. */
    private static final Map<String, List<String>> BENCH_ALLOWED = benchAllowed();
    private static final int MAX_CLASSES_PER_PACKAGE = 40;
    private static final int MAX_CYCLE_GROUP = 5;

    private static Map<String, List<String>> benchAllowed() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("config", List.of());
        m.put("measure", List.of("config"));
        m.put("run", List.of("config", "measure"));
        m.put("report", List.of("config", "measure", "run"));
        m.put("harness", List.of("measure"));
        return m;
    }

    @Test
    void benchmarkClientSubPackagesHaveNoCycle() {
        noCycles("dev.infersim.bench.(*)..").check(MAIN);
    }

    @Test
    void benchmarkClientSubPackagesUseOnlyThoseBelowThem() {
        for (Map.Entry<String, List<String>> e : BENCH_ALLOWED.entrySet()) {
            List<String> allowed = new ArrayList<>(ALLOWED.get("bench"));
            e.getValue().forEach(sub -> allowed.add("bench." + sub));
            usesOnly("bench." + e.getKey(), allowed).check(MAIN);
        }
        List<String> found = MAIN.stream().map(JavaClass::getPackageName)
                .filter(p -> p.startsWith("dev.infersim.bench.")).map(p -> p.split("\\.")[3]).distinct().sorted().toList();
        assertEquals(BENCH_ALLOWED.keySet().stream().sorted().toList(), found,
                "a new sub-package of dev.infersim.bench needs its allowed dependencies in PackageStructureTest");
    }

    @Test
    void benchmarkClientPackagesHoldAtMost40Classes() {
        JavaClasses bench = benchClasses();
        assertEquals(Map.of(), packagesOver(bench, MAX_CLASSES_PER_PACKAGE), "packages over " + MAX_CLASSES_PER_PACKAGE
                + " top-level classes (split them where the seams are)");
    }

    @Test
    void benchmarkClientHasNoClassCycleOverFiveClasses() {
        List<List<String>> groups = cycleGroups(benchClasses());
        int largest = groups.stream().mapToInt(List::size).max().orElse(0);
        assertTrue(largest <= MAX_CYCLE_GROUP, "class-level cycle groups: " + groups);
    }

    /** The size rule and the class-cycle rule find what they forbid, on the fixture's two classes that call each other. */
    @Test
    void theSizeAndClassCycleRulesReportWhatTheyForbid() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertEquals(List.of(List.of(CallsB.class.getName(), CallsA.class.getName())), cycleGroups(cycle)); // a.CallsB, b.CallsA
        assertEquals(List.of(), cycleGroups(new ClassFileImporter().importClasses(CallsA.class)));
        assertEquals(Map.of("dev.infersim.cli.structure.a", 1L, "dev.infersim.cli.structure.b", 1L), packagesOver(cycle, 0));
        assertEquals(Map.of(), packagesOver(cycle, 1));
    }

    private static JavaClasses benchClasses() {
        return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.infersim.bench");
    }

    /** Packages holding more than {@code limit} top-level classes (nested and anonymous ones not counted), with their counts. */
    private static Map<String, Long> packagesOver(JavaClasses classes, int limit) {
        Map<String, Long> count = new java.util.TreeMap<>();
        classes.stream().filter(JavaClass::isTopLevelClass).filter(c -> !c.getSimpleName().equals("package-info"))
                .forEach(c -> count.merge(c.getPackageName(), 1L, Long::sum));
        count.values().removeIf(n -> n <= limit);
        return count;
    }

    /**
     * The groups of two or more top-level classes that depend on each other in a cycle (strongly connected components
     * of the class graph, a nested class counted as its top-level class), each sorted, largest first.
     */
    private static List<List<String>> cycleGroups(JavaClasses classes) {
        Map<String, java.util.Set<String>> edges = new java.util.TreeMap<>();
        for (JavaClass c : classes) {
            String from = topLevel(c).getName();
            java.util.Set<String> to = edges.computeIfAbsent(from, k -> new java.util.TreeSet<>());
            c.getDirectDependenciesFromSelf().forEach(d -> {
                JavaClass target = topLevel(d.getTargetClass());
                if (classes.contain(target.getName()) && !target.getName().equals(from)) {
                    to.add(target.getName());
                }
            });
        }
        return new Tarjan(edges).groups();
    }

    private static JavaClass topLevel(JavaClass c) {
        JavaClass t = c.getBaseComponentType();
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** Tarjan's strongly connected components (recursive: the graphs here have tens of classes). */
    private static final class Tarjan {
        private final Map<String, java.util.Set<String>> edges;
        private final Map<String, Integer> index = new java.util.HashMap<>();
        private final Map<String, Integer> low = new java.util.HashMap<>();
        private final java.util.Deque<String> stack = new java.util.ArrayDeque<>();
        private final java.util.Set<String> onStack = new java.util.HashSet<>();
        private final List<List<String>> groups = new ArrayList<>();

        Tarjan(Map<String, java.util.Set<String>> edges) {
            this.edges = edges;
        }

        List<List<String>> groups() {
            edges.keySet().forEach(v -> {
                if (!index.containsKey(v)) {
                    visit(v);
                }
            });
            groups.sort((a, b) -> Integer.compare(b.size(), a.size()));
            return groups;
        }

        private void visit(String v) {
            index.put(v, index.size());
            low.put(v, index.get(v));
            stack.push(v);
            onStack.add(v);
            for (String w : edges.getOrDefault(v, java.util.Set.of())) {
                if (!index.containsKey(w)) {
                    visit(w);
                    low.put(v, Math.min(low.get(v), low.get(w)));
                } else if (onStack.contains(w)) {
                    low.put(v, Math.min(low.get(v), index.get(w)));
                }
            }
            if (low.get(v).equals(index.get(v))) {
                List<String> group = new ArrayList<>();
                String w;
                do {
                    w = stack.pop();
                    onStack.remove(w);
                    group.add(w);
                } while (!w.equals(v));
                if (group.size() > 1) {
                    group.sort(null);
                    groups.add(group);
                }
            }
        }
    }

    /** The rules find what they forbid: a cycle between two fixture packages, and the engine's use of common. */
    @Test
    void theRulesReportACycleAndAForbiddenDependency() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(noCycles("dev.infersim.cli.structure.(*)..").evaluate(cycle).hasViolation());
        assertTrue(usesOnly("engine", List.of()).evaluate(MAIN).hasViolation());
    }
}
