package dev.infersim.cli;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A disk of a few hundred kilobytes for a test: a tmpfs mounted on a directory (Linux, as root), so that a full disk
 * is a real one, ENOSPC from the kernel. Where it cannot be mounted the test is skipped, unless INFERSIM_REQUIRE_TMPFS
 * is 1 (CI), where that is a failure.
 */
final class SmallDisk implements AutoCloseable {
    private final Path dir;

    private SmallDisk(Path dir) {
        this.dir = dir;
    }

    static SmallDisk mount(Path dir, int kib) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + kib + "k", "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            String why = "cannot mount a tmpfs (needs Linux and root): " + output.trim();
            if ("1".equals(System.getenv("INFERSIM_REQUIRE_TMPFS"))) {
                throw new IllegalStateException(why);
            }
            Assumptions.abort(why);
        }
        return new SmallDisk(dir);
    }

    Path dir() {
        return dir;
    }

    /** Fills the disk with one file until the kernel says it is full; the file's name. */
    Path fill() throws IOException {
        Path filler = dir.resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
            byte[] block = new byte[4096];
            while (true) {
                out.write(block);
            }
        } catch (IOException full) {
            if (!String.valueOf(full.getMessage()).contains("No space left")) {
                throw full;
            }
        }
        return filler;
    }

    /** The files on the disk now, by name. */
    java.util.List<String> files() throws IOException {
        try (var list = Files.list(dir)) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder("umount", dir.toString()).redirectErrorStream(true).start().waitFor();
    }
}
