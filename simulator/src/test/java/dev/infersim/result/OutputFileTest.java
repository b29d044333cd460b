package dev.infersim.result;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Files are written whole or not at all: a failure leaves the target as it was, no temporary file, and one line. */
class OutputFileTest {
    @TempDir
    Path dir;

    @Test
    void aWriteThatFailsLeavesTheTargetAsItWasAndNoTemporaryFile() throws Exception {
        Path target = dir.resolve("result.json");
        OutputFile.writeString(target, "first");
        ConfigException e = assertThrows(ConfigException.class, () -> OutputFile.write(target, out -> {
            out.write("half of the second".getBytes());
            throw new IOException("No space left on device");
        }));
        assertEquals("cannot write " + target + ": No space left on device", e.getMessage());
        assertEquals("first", Files.readString(target));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    /**
     * A result is readable by whoever the umask lets read a new file (a web server, a container sharing the volume),
     * as the shell's own redirect would make it: 0666 less the umask the shell reports, not the owner-only 0600 of a
     * temporary file.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void aWrittenFileHasThePermissionsTheUmaskGivesANewFile() throws Exception {
        Process sh = new ProcessBuilder("sh", "-c", "umask").start();
        int umask = Integer.parseInt(new String(sh.getInputStream().readAllBytes()).strip(), 8);
        assertEquals(0, sh.waitFor());
        Path target = dir.resolve("report.html");
        OutputFile.writeString(target, "<p>a report</p>");
        Set<PosixFilePermission> expected = new HashSet<>();
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE, high bit first
        for (int i = 0; i < bits.length; i++) {
            if ((0666 & ~umask & (1 << (bits.length - 1 - i))) != 0) {
                expected.add(bits[i]);
            }
        }
        assertEquals(expected, Files.getPosixFilePermissions(target), "umask " + Integer.toOctalString(umask));
        Path scratch = OutputFile.createScratch(dir, ".rows-", ".jsonl");
        assertEquals(expected, Files.getPosixFilePermissions(scratch));
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aDirectoryNothingCanBeWrittenToIsNamedInOneLine() {
        ConfigException e = assertThrows(ConfigException.class, () -> OutputFile.writeString(Path.of("/proc/1/result.json"), "x"));
        assertTrue(e.getMessage().startsWith("cannot write /proc/1/result.json: "), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void requestRowsThatCannotBeWrittenStopTheFileNotTheRunAndSaySoOnce() throws Exception {
        Path ok = dir.resolve("ok.jsonl");
        try (RequestLogWriter w = new RequestLogWriter(ok, false)) {
            assertNull(w.failure());
        }
        assertTrue(Files.exists(ok), "a file written whole is put in place");
        assertTrue(assertThrows(ConfigException.class, () -> new RequestLogWriter(Path.of("/proc/1/rows.jsonl"), false))
                .getMessage().startsWith("cannot write /proc/1/rows.jsonl: "));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count(), "only the finished file");
        }
    }
}
