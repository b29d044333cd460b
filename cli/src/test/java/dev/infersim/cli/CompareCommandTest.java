package dev.infersim.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompareCommandTest {

    @TempDir
    Path dir;

    private void simulate(String name, String rate) {
        CliRun r = CliRun.of("simulate", "--num-prompts", "50", "--request-rate", rate, "--random-output-len", "16",
                "--save-result", "--save-detailed", "--result-dir", dir.toString(), "--result-filename", name + ".json");
        assertEquals(0, r.exitCode(), r.err());
    }

    private String file(String name) {
        return dir.resolve(name).toString();
    }

    @Test
    void simulatedResultsWithDetailFilesGetTheSignificanceTest() {
        simulate("a", "5");
        simulate("b", "50");

        CliRun r = CliRun.of("compare", file("a.json"), file("b.json"));

        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("Mann-Whitney"), r.out());
    }

    @Test
    void aMissingOrMalformedDetailFileIsOneLineNamingIt() {
        simulate("a", "5");
        simulate("b", "50");

        assertOneLineError(CliRun.of("compare", file("a.json"), file("b.json"), "--detailed-a", file("none.jsonl")),
                "--detailed-a");
        assertOneLineError(CliRun.of("compare", file("a.json"), file("b.json"), "--detailed-b", file("a.json")),
                "a.json");
    }

    @Test
    void aDetailFileGivenAsAResultIsOneLineNamingIt() {
        simulate("a", "5");

        assertOneLineError(CliRun.of("compare", file("a.json"), file("a.jsonl")), "a.jsonl");
    }

    @Test
    void aMalformedResultIsOneCleanLineWithLineAndColumn() throws java.io.IOException {
        simulate("a", "5");
        java.nio.file.Files.writeString(dir.resolve("broken.json"), "{\"completed\": 5,\n  \"duration\": }");

        CliRun r = CliRun.of("compare", file("a.json"), file("broken.json"));
        assertOneLineError(r, file("broken.json") + ":2:15: malformed JSON: ");
        assertTrue(!r.err().contains("Source"), "no Jackson source excerpt: " + r.err());
    }

    private static void assertOneLineError(CliRun r, String text) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains(text), err);
    }
}
