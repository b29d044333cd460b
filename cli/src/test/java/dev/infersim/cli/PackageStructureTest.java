package dev.infersim.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
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

    /** The cli and demo packages (issue 36): at most this many top-level classes each. */
    private static final int CLI_AND_DEMO_MAX_CLASSES_PER_PACKAGE = 40;

    /** The packages under {@code prefix} holding more than {@code max} top-level classes (nested ones not counted). */
    private static Map<String, Long> packagesOver(JavaClasses classes, String prefix, int max) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        classes.stream().filter(c -> c.isTopLevelClass() && !c.getSimpleName().equals("package-info")
                        && under(c, prefix))
                .forEach(c -> counts.merge(c.getPackageName(), 1L, Long::sum));
        counts.values().removeIf(n -> n <= max);
        return counts;
    }

    /** The flags the commands share ({@code root.options}) never use the commands above them ({@code root}). */
    private static ArchRule optionsBelowCommands(String root) {
        return classes().that().resideInAPackage(root + ".options..")
                .should().onlyDependOnClassesThat(JavaClass.Predicates.resideOutsideOfPackage(root + "..")
                        .or(JavaClass.Predicates.resideInAPackage(root + ".options..")))
                .because(root + ".options holds the flags the commands share, below the commands");
    }

    @Test
    void cliAndDemoPackagesHoldAtMost40ClassesEach() {
        for (String prefix : List.of("dev.infersim.cli", "dev.infersim.demo")) {
            assertEquals(Map.of(), packagesOver(MAIN, prefix, CLI_AND_DEMO_MAX_CLASSES_PER_PACKAGE),
                    "packages over " + CLI_AND_DEMO_MAX_CLASSES_PER_PACKAGE + " classes");
        }
    }

    @Test
    void cliOptionsAreBelowTheCommands() {
        optionsBelowCommands("dev.infersim.cli").check(MAIN);
        noCycles("dev.infersim.cli.(*)..").check(MAIN);
    }

    /** The largest class-level cycle group allowed in the cli and demo packages (issue 36). */
    private static final int CLI_AND_DEMO_MAX_CYCLE_GROUP = 5;

    /**
     * The class-level cycle groups under {@code prefix}: the strongly connected components (Tarjan) of more than one
     * class of the graph of class dependencies, nested classes counted as their top-level class.
     */
    private static List<java.util.Set<String>> cycleGroups(JavaClasses classes, String prefix) {
        Map<String, java.util.Set<String>> uses = new java.util.TreeMap<>();
        for (JavaClass c : classes) {
            if (!under(c, prefix)) {
                continue;
            }
            java.util.Set<String> to = uses.computeIfAbsent(topLevel(c), k -> new java.util.TreeSet<>());
            for (var d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass().getBaseComponentType();
                if (under(target, prefix) && !topLevel(target).equals(topLevel(c))) {
                    to.add(topLevel(target));
                }
            }
        }
        return new Object() {
            final Map<String, Integer> index = new java.util.HashMap<>();
            final Map<String, Integer> low = new java.util.HashMap<>();
            final java.util.Deque<String> stack = new java.util.ArrayDeque<>();
            final List<java.util.Set<String>> groups = new ArrayList<>();

            List<java.util.Set<String>> all() {
                uses.keySet().forEach(v -> {
                    if (!index.containsKey(v)) {
                        visit(v);
                    }
                });
                return groups;
            }

            void visit(String v) {
                index.put(v, index.size());
                low.put(v, index.get(v));
                stack.push(v);
                for (String w : uses.getOrDefault(v, java.util.Set.of())) {
                    if (!index.containsKey(w)) {
                        visit(w);
                        low.put(v, Math.min(low.get(v), low.get(w)));
                    } else if (stack.contains(w)) {
                        low.put(v, Math.min(low.get(v), index.get(w)));
                    }
                }
                if (low.get(v).equals(index.get(v))) {
                    java.util.Set<String> group = new java.util.TreeSet<>();
                    String w;
                    do {
                        w = stack.pop();
                        group.add(w);
                    } while (!w.equals(v));
                    if (group.size() > 1) {
                        groups.add(group);
                    }
                }
            }
        }.all();
    }

    /** Whether {@code c} is in package {@code prefix} or below it. */
    private static boolean under(JavaClass c, String prefix) {
        return c.getPackageName().equals(prefix) || c.getPackageName().startsWith(prefix + ".");
    }

    private static String topLevel(JavaClass c) {
        return c.getName().split("\\$")[0];
    }

    @Test
    void cliAndDemoHaveNoClassCycleGroupOverFive() {
        for (String prefix : List.of("dev.infersim.cli", "dev.infersim.demo")) {
            List<java.util.Set<String>> large = cycleGroups(MAIN, prefix).stream()
                    .filter(g -> g.size() > CLI_AND_DEMO_MAX_CYCLE_GROUP).toList();
            assertEquals(List.of(), large, "class cycle groups over " + CLI_AND_DEMO_MAX_CYCLE_GROUP + " classes");
        }
    }

    /** The cli rules find what they forbid: options that use a command, a package over a class limit, a class cycle. */
    @Test
    void theCliRulesReportAnOptionUsingACommandAndAFullPackage() {
        JavaClasses fixture = new ClassFileImporter().importClasses(UsesACommand.class, UsesACommand.Nested.class,
                ACommand.class);
        assertTrue(optionsBelowCommands("dev.infersim.cli.structure").evaluate(fixture).hasViolation());
        assertEquals(Map.of("dev.infersim.cli.structure", 1L, "dev.infersim.cli.structure.options", 1L),
                packagesOver(fixture, "dev.infersim.cli.structure", 0), "nested classes are not counted");
        assertEquals(Map.of(), packagesOver(fixture, "dev.infersim.cli.structure", 1));
        assertEquals(List.of(java.util.Set.of(CallsA.class.getName(), CallsB.class.getName())),
                cycleGroups(new ClassFileImporter().importClasses(CallsA.class, CallsB.class), "dev.infersim.cli.structure"),
                "the two fixture classes that call each other are one cycle group");
        assertEquals(List.of(), cycleGroups(fixture, "dev.infersim.cli.structure"), "one way is no cycle");
    }

    /** The rules find what they forbid: a cycle between two fixture packages, and the engine's use of common. */
    @Test
    void theRulesReportACycleAndAForbiddenDependency() {
        JavaClasses cycle = new ClassFileImporter().importClasses(CallsA.class, CallsB.class);
        assertTrue(noCycles("dev.infersim.cli.structure.(*)..").evaluate(cycle).hasViolation());
        assertTrue(usesOnly("engine", List.of()).evaluate(MAIN).hasViolation());
    }
}
