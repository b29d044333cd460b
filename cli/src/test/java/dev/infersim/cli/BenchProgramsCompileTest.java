package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark programs under bench/ are single-file Java programs run with {@code java -cp ... FILE.java} against the
 * built jar, so nothing else compiles them: here each is compiled against this module's test classpath (every module
 * and its dependencies, as in cli/target/infersim.jar), so a renamed class or method fails the build instead of the next
 * benchmark run.
 */
class BenchProgramsCompileTest {

    private static final Path BENCH = Path.of("..", "bench");

    private static List<Path> programs() throws IOException {
        try (Stream<Path> files = Files.walk(BENCH)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }

    @Test
    void everyBenchProgramCompilesAgainstTheModules(@TempDir Path out) throws IOException {
        List<Path> programs = programs();
        assertFalse(programs.isEmpty(), "no .java files under " + BENCH.toAbsolutePath());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        // surefire runs tests from a manifest-only jar; the real classpath is in this property
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> failures = new ArrayList<>();
        for (Path program : programs) {
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
                Path classes = Files.createDirectories(out.resolve(program.getFileName().toString()));
                List<String> options = List.of("--release", "17", "-proc:none", "-cp", classpath, "-d", classes.toString());
                boolean ok = javac.getTask(null, files, diagnostics, options, null,
                        files.getJavaFileObjects(program.toFile())).call();
                if (!ok) {
                    failures.add(program + ":\n" + String.join("\n", diagnostics.getDiagnostics().stream()
                            .filter(d -> d.getKind() == Diagnostic.Kind.ERROR).map(d -> d.toString()).toList()));
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n\n", failures));
    }
}
