package dev.infersim.result;

import dev.infersim.common.ConfigException;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * How every file a command writes (results, reports, HTML pages, histogram logs, per-request rows) reaches the disk:
 * into a temporary file beside the target, then moved into place in one rename, so a reader never finds half a file
 * and a failed write (a full disk, a read-only directory) leaves the target as it was. On failure the temporary file
 * is removed and a {@link ConfigException} names the target and the cause in one line, which the command line answers
 * with exit code 2. The file gets the permissions any new file gets (0666 less the umask), as a shell's redirect would
 * give it: readable by a web server or a container sharing the volume where the umask allows.
 */
public final class OutputFile {
    private OutputFile() {
    }

    /** What is written into the file. */
    public interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    /** Writes {@code target} whole from {@code content}, creating its directory, or throws naming it and why. */
    public static void write(Path target, Content content) {
        Pending p = Pending.open(target);
        try {
            try (OutputStream out = new BufferedOutputStream(p.stream(), 1 << 16)) {
                content.writeTo(out);
            }
            p.commit();
        } catch (IOException | UncheckedIOException e) {
            throw failure(target, e);
        } finally {
            p.close();
        }
    }

    /** Writes {@code text} as UTF-8 into {@code target}, whole or not at all. */
    public static void writeString(Path target, String text) {
        write(target, out -> out.write(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /**
     * Creates a new empty file in {@code dir} with a name of its own ({@code prefix}, random digits, {@code suffix}) and
     * the permissions the umask gives a new file; {@link Files#createTempFile} would make it readable by its owner only.
     */
    public static Path createScratch(Path dir, String prefix, String suffix) throws IOException {
        while (true) {
            Path p = dir.resolve(prefix + Long.toUnsignedString(RANDOM.nextLong()) + suffix);
            try {
                Files.newOutputStream(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                return p;
            } catch (FileAlreadyExistsException e) {
                // another name
            }
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    /** Moves a finished file into place, or throws naming the target and why. */
    public static void move(Path from, Path to) {
        try {
            moveAtomically(from, to);
        } catch (IOException e) {
            throw failure(to, e);
        }
    }

    /** A failure to write {@code target}, as one line: the file and the operating system's reason. */
    public static ConfigException failure(Path target, Throwable cause) {
        Throwable t = cause instanceof UncheckedIOException u && u.getCause() != null ? u.getCause() : cause;
        if (t instanceof NoSuchFileException n && n.getFile() != null
                && Path.of(n.getFile()).toAbsolutePath().getParent().equals(target.toAbsolutePath().getParent())) {
            // the directory is there but refuses new files (/proc, a read-only mount seen as such)
            return new ConfigException("cannot write " + target + ": its directory does not take new files", cause);
        }
        return new ConfigException("cannot write " + target + ": " + reason(cause), cause);
    }

    /** The operating system's words for why a file operation failed ("No space left on device", "Permission denied"). */
    public static String reason(Throwable e) {
        Throwable t = e instanceof UncheckedIOException u && u.getCause() != null ? u.getCause() : e;
        if (t instanceof NoSuchFileException n) {
            return "no such file or directory" + (n.getFile() == null ? "" : " (" + n.getFile() + ")");
        }
        if (t instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (t instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }

    private static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * A file written over time (a run's per-request rows): into a temporary file beside the target until
     * {@link #commit}; closing it uncommitted removes the temporary file.
     */
    public static final class Pending implements AutoCloseable {
        private final Path target;
        private final Path temp;
        private final OutputStream stream;
        private boolean done;

        private Pending(Path target, Path temp, OutputStream stream) {
            this.target = target;
            this.temp = temp;
            this.stream = stream;
        }

        /** Creates the target's directory and a temporary file beside it, or throws naming the target and why. */
        public static Pending open(Path target) {
            Path temp = null;
            try {
                Path dir = target.toAbsolutePath().getParent();
                Files.createDirectories(dir);
                temp = createScratch(dir, "." + target.getFileName() + ".", ".tmp");
                return new Pending(target, temp, Files.newOutputStream(temp));
            } catch (IOException | RuntimeException e) {
                deleteQuietly(temp);
                throw failure(target, e);
            }
        }

        /** Where the bytes go until the commit. */
        public OutputStream stream() {
            return stream;
        }

        /** Closes the stream and moves the file into place. */
        public void commit() throws IOException {
            stream.close();
            moveAtomically(temp, target);
            done = true;
        }

        /** Removes the temporary file unless it was committed. Never throws. */
        @Override
        public void close() {
            if (!done) {
                try {
                    stream.close();
                } catch (IOException ignored) {
                    // the file goes anyway
                }
                deleteQuietly(temp);
                done = true;
            }
        }
    }

    private static void deleteQuietly(Path p) {
        if (p == null) {
            return;
        }
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // nothing more to do: the failure being reported is the one that matters
        }
    }
}
