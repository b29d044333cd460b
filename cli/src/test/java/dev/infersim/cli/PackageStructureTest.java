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
 * result schema and never the engine or the mock server (in code, and in its pom outside test scope).
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

    /** The rules find what they forbid: a cycle between two fixture packages, and the engine's use of common. */
    @Test
    void theRulesReportACycleAndAForbiddenDependency() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(noCycles("dev.infersim.cli.structure.(*)..").evaluate(cycle).hasViolation());
        assertTrue(usesOnly("engine", List.of()).evaluate(MAIN).hasViolation());
    }

    // mock-server's sub-packages (issue 36), kept apart from the rules above so that other modules' additions merge.

    /** Each sub-package of dev.infersim.server (mock-server's README, Layout) and the server sub-packages it may use. */
    private static final Map<String, List<String>> SERVER_ALLOWED = serverAllowed();
    /** The most top-level classes a hand-written mock-server package may hold. */
    private static final int SERVER_MAX_CLASSES_PER_PACKAGE = 40;
    /** The most classes one class-level cycle group of mock-server may hold. */
    private static final int SERVER_MAX_CYCLE_GROUP = 5;

    private static Map<String, List<String>> serverAllowed() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("json", List.of());
        m.put("observe", List.of("json"));
        m.put("text", List.of("json"));
        m.put("config", List.of("json", "observe", "text"));
        m.put("output", List.of("json", "text", "config"));
        m.put("kv", List.of("config"));
        m.put("http", List.of("json", "config"));
        m.put("engine", List.of("json", "observe", "config", "output", "kv"));
        m.put("request", List.of("json", "text", "config", "output", "engine"));
        m.put("model", List.of("json", "observe", "text", "config", "output", "engine", "request"));
        m.put("api.openai", List.of("json", "text", "config", "output", "http", "engine", "request", "model"));
        m.put("api.anthropic", List.of("json", "output", "engine", "request", "model", "api.openai"));
        m.put("api.responses", List.of("json", "config", "output", "http", "engine", "request", "model", "api.openai"));
        m.put("api.embeddings", List.of("json", "config", "engine", "request", "model", "api.openai"));
        m.put("api.tokens", List.of("json", "output", "engine", "request", "model"));
        m.put("grpc", List.of());
        m.put("routes", List.of("json", "observe", "text", "config", "output", "http", "engine", "request", "model",
                "api.openai", "api.anthropic", "api.responses", "api.embeddings", "api.tokens", "grpc"));
        m.put("fleet", List.of("json", "observe", "text", "config", "http", "engine", "model", "routes"));
        return m;
    }

    /** Classes of dev.infersim.server.{@code from} (that package alone) use no other server package than {@code allowed}. */
    private static ArchRule serverUsesOnly(String from, List<String> allowed) {
        List<String> packages = new ArrayList<>();
        packages.add("dev.infersim.server." + from);
        allowed.forEach(p -> packages.add("dev.infersim.server." + p));
        return classes().that().resideInAPackage("dev.infersim.server." + from)
                .should().onlyDependOnClassesThat(JavaClass.Predicates.resideOutsideOfPackage("dev.infersim.server..")
                        .or(JavaClass.Predicates.resideInAnyPackage(packages.toArray(String[]::new))))
                .because("dev.infersim.server." + from + " may use only " + allowed);
    }

    /** The class's outermost enclosing class: nested and anonymous classes count as part of it. */
    private static JavaClass topLevel(JavaClass c) {
        JavaClass t = c.getBaseComponentType();
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** Top-level classes per package under {@code prefix}, for the packages holding more than {@code max}. */
    private static Map<String, Long> packagesOver(JavaClasses all, String prefix, int max) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        all.stream().filter(c -> c.getPackageName().startsWith(prefix) && c.isTopLevelClass())
                .forEach(c -> counts.merge(c.getPackageName(), 1L, Long::sum));
        counts.values().removeIf(n -> n <= max);
        return counts;
    }

    /**
     * The class-level cycle groups (strongly connected components, Tarjan 1972) of the top-level classes under
     * {@code prefix}, nested classes folded into theirs, largest first; classes outside every cycle are left out.
     */
    private static List<List<String>> cycleGroups(JavaClasses all, String prefix) {
        Map<String, java.util.Set<String>> uses = new java.util.TreeMap<>();
        for (JavaClass c : all) {
            String from = topLevel(c).getName();
            if (!c.getPackageName().startsWith(prefix)) {
                continue;
            }
            java.util.Set<String> targets = uses.computeIfAbsent(from, k -> new java.util.TreeSet<>());
            c.getDirectDependenciesFromSelf().forEach(d -> {
                JavaClass t = topLevel(d.getTargetClass());
                if (t.getPackageName().startsWith(prefix) && !t.getName().equals(from)) {
                    targets.add(t.getName());
                }
            });
        }
        return new Tarjan(uses).groups();
    }

    /** Tarjan's strongly connected components of a small graph (recursive: mock-server has about 110 classes). */
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
            groups.sort((a, b) -> b.size() - a.size());
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

    @Test
    void mockServerSubPackagesHaveNoCycle() {
        SlicesRuleDefinition.slices().matching("dev.infersim.server.(**)").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    void everyMockServerPackageUsesOnlyThoseBelowIt() {
        for (Map.Entry<String, List<String>> e : SERVER_ALLOWED.entrySet()) {
            serverUsesOnly(e.getKey(), e.getValue()).check(MAIN);
        }
    }

    @Test
    void everyMockServerPackageHasItsPlaceInTheList() {
        List<String> found = MAIN.stream().map(JavaClass::getPackageName).filter(p -> p.startsWith("dev.infersim.server."))
                .map(p -> p.substring("dev.infersim.server.".length())).distinct().sorted().toList();
        assertEquals(SERVER_ALLOWED.keySet().stream().sorted().toList(), found,
                "a new mock-server package needs its allowed dependencies in PackageStructureTest");
    }

    /** protoc's output for vllm_engine.proto (one class per message and its OrBuilder) is left out: nobody writes it. */
    @Test
    void noHandWrittenMockServerPackageHoldsMoreThan40Classes() {
        Map<String, Long> over = packagesOver(MAIN, "dev.infersim.server", SERVER_MAX_CLASSES_PER_PACKAGE);
        over.remove("dev.infersim.server.grpc");
        assertTrue(over.isEmpty(), "packages over " + SERVER_MAX_CLASSES_PER_PACKAGE + " classes: " + over);
    }

    @Test
    void noClassLevelCycleInMockServerHoldsMoreThan5Classes() {
        List<List<String>> groups = cycleGroups(MAIN, "dev.infersim.server");
        assertTrue(groups.isEmpty() || groups.get(0).size() <= SERVER_MAX_CYCLE_GROUP,
                "largest class cycle group: " + (groups.isEmpty() ? List.of() : groups.get(0)));
    }

    /** The mock-server rules find what they forbid, on the fixture packages' deliberate two-class cycle. */
    @Test
    void theMockServerRulesReportACycleGroupAndAnOversizedPackage() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertEquals(List.of(List.of(CallsB.class.getName(), CallsA.class.getName()).stream().sorted().toList()),
                cycleGroups(cycle, "dev.infersim.cli.structure"));
        assertEquals(Map.of("dev.infersim.cli.structure.a", 1L, "dev.infersim.cli.structure.b", 1L),
                packagesOver(cycle, "dev.infersim.cli.structure", 0));
        assertTrue(packagesOver(cycle, "dev.infersim.cli.structure", 1).isEmpty());
        assertTrue(SlicesRuleDefinition.slices().matching("dev.infersim.cli.structure.(**)").should().beFreeOfCycles()
                .evaluate(cycle).hasViolation());
        assertTrue(serverUsesOnly("routes", List.of()).evaluate(MAIN).hasViolation());
    }
}
