package dev.infersim.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import dev.infersim.cli.structure.ACommand;
import dev.infersim.cli.structure.a.CallsB;
import dev.infersim.cli.structure.b.CallsA;
import dev.infersim.cli.structure.options.UsesACommand;
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
 * compiled classes with ArchUnit: no package cycle, and each top-level package depends only on the infersim packages
 * listed here. Inside simulator the packages form a line, {@code sim -> result -> workload -> common} with
 * {@code engine -> common}; the benchmark client is a client for real servers, so it uses only the workload and the
 * result schema and never the engine or the mock server (in code, and in its pom outside test scope). No package
 * holds more than {@value #MAX_CLASSES_PER_PACKAGE} classes and no group of classes that reach each other through
 * their dependencies more than {@value #MAX_CYCLE_GROUP}: rooms a newcomer can find. The sub-packages inside each
 * top-level package: {@link SubPackageStructureTest}.
 */
class PackageStructureTest {

    private static final JavaClasses MAIN = ClassGraph.mainClasses();

    static final int MAX_CLASSES_PER_PACKAGE = 40;
    static final int MAX_CYCLE_GROUP = 5;
    /** protoc's output for vllm_engine.proto (one class per message and its OrBuilder): nobody writes it. */
    private static final String GENERATED = "dev.infersim.server.grpc";

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
        m.put("demo", List.of("common", "engine", "workload", "result", "sim", "queueing", "prediction", "server", "bench"));
        m.put("cli", List.of("common", "engine", "workload", "result", "sim", "queueing", "prediction", "server", "bench", "demo"));
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

    /** The class-level cycle groups larger than {@code limit} in each top-level package. */
    private static List<List<String>> cycleGroupsOver(JavaClasses classes, List<String> topLevelPackages, int limit) {
        List<List<String>> large = new ArrayList<>();
        for (String p : topLevelPackages) {
            ClassGraph.cycleGroups(classes, "dev.infersim." + p).stream().filter(g -> g.size() > limit)
                    .forEach(large::add);
        }
        return large;
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
    void noPackageHoldsMoreThanFortyClasses() {
        Map<String, Long> over = ClassGraph.packagesOver(MAIN, MAX_CLASSES_PER_PACKAGE);
        over.remove(GENERATED);
        assertEquals(Map.of(), over, "split a package along its seams");
    }

    @Test
    void noClassCycleGroupIsLargerThanFive() {
        assertEquals(List.of(), cycleGroupsOver(MAIN, List.copyOf(ALLOWED.keySet()), MAX_CYCLE_GROUP));
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

    /**
     * The rules find what they forbid: a cycle between two fixture packages (as packages and as a group of classes),
     * the engine's use of common, packages over a lower cap (nested classes not counted), the groups of today's main
     * code under a lower limit.
     */
    @Test
    void theRulesReportWhatTheyForbid() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(noCycles("dev.infersim.cli.structure.(*)..").evaluate(cycle).hasViolation());
        assertTrue(usesOnly("engine", List.of()).evaluate(MAIN).hasViolation());
        assertEquals(List.of(List.of(CallsB.class.getName(), CallsA.class.getName()).stream().sorted().toList()),
                ClassGraph.cycleGroups(cycle, "dev.infersim.cli.structure"));
        assertEquals(List.of(), ClassGraph.cycleGroups(new ClassFileImporter().importClasses(CallsA.class),
                "dev.infersim.cli.structure"), "one way is no cycle");
        JavaClasses nested = new ClassFileImporter().importClasses(UsesACommand.class, UsesACommand.Nested.class,
                ACommand.class);
        assertEquals(Map.of("dev.infersim.cli.structure", 1L, "dev.infersim.cli.structure.options", 1L),
                ClassGraph.packagesOver(nested, 0), "nested classes are not counted");
        assertEquals(Map.of(), ClassGraph.packagesOver(nested, 1));
        assertTrue(ClassGraph.packagesOver(MAIN, 30).containsKey("dev.infersim.engine"));
        assertTrue(!cycleGroupsOver(MAIN, List.copyOf(ALLOWED.keySet()), 1).isEmpty());
    }
}
