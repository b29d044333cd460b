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
}
