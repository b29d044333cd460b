package dev.infersim.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The commands a reader could copy from the repository's READMEs and guides: every line of a code block (fenced, or
 * indented by four spaces) that runs {@code ./infersim} or {@code curl}, sets a variable, loops, or writes a file with
 * a here-document, joined across its {@code \} continuations (a {@code $ } prompt and a trailing {@code &} or comment
 * dropped), in blocks as written; and every {@code ./infersim ...} in backticks in the prose, each a block of its own.
 * A span naming only a command ({@code ./infersim serve}) is a mention, and one with a placeholder ({@code FILE},
 * {@code ...}) a template, not an example. Output lines in a block are not commands, and a block fenced as
 * {@code text} is a record of what ran once (its inputs no longer in the tree), not an example.
 */
final class ReadmeCommands {
    /** One command as written, with the line it starts on and the output the document shows after it. */
    record Command(int line, String text, String output) {
        Command(int line, String text) {
            this(line, text, "");
        }
    }

    /** Commands that belong together (one code block, or one span in prose), from one file. */
    record Block(Path file, int line, List<Command> commands) {
        @Override
        public String toString() {
            return file + ":" + line;
        }
    }

    private static final Pattern SPAN = Pattern.compile("`(\\./infersim(?:[^`]*))`");
    private static final Pattern RUNS = Pattern.compile("^(?:[A-Z_]+=(?:'[^']*'|\"[^\"]*\"|\\S+) +)*(?:\\./infersim\\b|curl |vllm bench )"
            + "|^[A-Z]+=(?:\\$\\(\\(.*\\)\\)|\"[^\"]*\"|'[^']*'|\\S+)\\s*(?:#.*)?$|^for \\w+ in |^cat > \\S+ <<");

    private ReadmeCommands() {
    }

    /** The READMEs and guides under {@code root}: every README.md and every file in docs/, no build output. */
    static List<Path> documents(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/")
                            && !p.toString().contains("/node_modules/"))
                    .filter(p -> p.getFileName().toString().equals("README.md")
                            || p.getParent().getFileName().toString().equals("docs") && p.toString().endsWith(".md"))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every block of commands in one document, in order. */
    static List<Block> blocks(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Block> blocks = new ArrayList<>();
        boolean fenced = false;
        boolean record = false;
        List<Command> current = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < lines.size(); i++) {
            String raw = lines.get(i);
            if (raw.strip().startsWith("```")) {
                if (fenced && !current.isEmpty() && !record) {
                    blocks.add(new Block(file, start, List.copyOf(current)));
                }
                current.clear();
                fenced = !fenced;
                record = fenced && raw.strip().equals("```text");
                start = i + 2;
                continue;
            }
            boolean indented = !fenced && raw.startsWith("    ") && RUNS.matcher(raw.strip()).find();
            if (fenced || indented) {
                String text = raw.strip().replaceFirst("^\\$ ", "");
                if (!RUNS.matcher(text).find()) {
                    if (fenced && !current.isEmpty() && !text.isEmpty()) { // what the document shows it printed
                        Command last = current.remove(current.size() - 1);
                        current.add(new Command(last.line(), last.text(), last.output() + text + "\n"));
                    }
                    continue;
                }
                int first = i;
                if (text.startsWith("cat > ")) { // a here-document: its lines up to the tag are the command
                    String tag = text.replaceFirst(".*<<'?(\\w+)'?\\s*$", "$1");
                    StringBuilder doc = new StringBuilder(text);
                    while (++i < lines.size() && !lines.get(i).strip().equals(tag)) {
                        doc.append('\n').append(lines.get(i));
                    }
                    current.add(new Command(first + 1, doc.toString()));
                    continue;
                }
                StringBuilder command = new StringBuilder(text);
                while (command.toString().endsWith("\\") && i + 1 < lines.size()) {
                    command.setLength(command.length() - 1);
                    command.append(' ').append(lines.get(++i).strip());
                }
                if (indented) {
                    blocks.add(new Block(file, first + 1, List.of(new Command(first + 1, tidy(command.toString())))));
                } else {
                    if (current.isEmpty()) {
                        start = first + 1;
                    }
                    current.add(new Command(first + 1, tidy(command.toString())));
                }
            }
        }
        // spans in the prose, which may wrap across lines
        Matcher m = SPAN.matcher(String.join("\n", fencedOut(lines)));
        while (m.find()) {
            String text = m.group(1).replaceAll("\\s+", " ").strip();
            if (text.matches("\\./infersim( [a-z-]+)?") || text.contains("...") || text.matches(".*\\b(FILE|URL|PATH)\\b.*")) {
                continue; // a mention of a command, or a template with placeholders: not an example
            }
            int line = 1 + (int) String.join("\n", fencedOut(lines)).substring(0, m.start()).chars().filter(c -> c == '\n').count();
            blocks.add(new Block(file, line, List.of(new Command(line, tidy(text)))));
        }
        blocks.sort((a, b) -> Integer.compare(a.line(), b.line()));
        return blocks;
    }

    /** Every mention of a command in backticks ({@code ./infersim serve}), which must name one that exists. */
    static List<String> mentions(Path file) {
        List<String> out = new ArrayList<>();
        try {
            Matcher m = SPAN.matcher(String.join("\n", fencedOut(Files.readAllLines(file))));
            while (m.find()) {
                String text = m.group(1).replaceAll("\\s+", " ").strip();
                if (text.matches("\\./infersim [a-z-]+")) {
                    out.add(text.substring("./infersim ".length()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** The lines with fenced blocks blanked, so that line numbers hold. */
    private static List<String> fencedOut(List<String> lines) {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String l : lines) {
            if (l.strip().startsWith("```")) {
                fenced = !fenced;
                out.add("");
            } else {
                out.add(fenced ? "" : l);
            }
        }
        return out;
    }

    /** Without a trailing comment ({@code  # ...} outside quotes) or {@code &}. */
    static String tidy(String command) {
        boolean single = false;
        boolean dbl = false;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (c == '\'' && !dbl) {
                single = !single;
            } else if (c == '"' && !single) {
                dbl = !dbl;
            } else if (c == '#' && !single && !dbl && i > 0 && Character.isWhitespace(command.charAt(i - 1))) {
                command = command.substring(0, i);
                break;
            }
        }
        return command.strip().replaceFirst("\\s*&$", "").strip();
    }

    /** A command line split as a POSIX shell splits it: quotes and backslashes removed, no expansion. */
    static List<String> words(String command) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean any = false;
        for (int i = 0; i < command.length(); i++) {
            char c = command.charAt(i);
            if (c == '\'') {
                int end = command.indexOf('\'', i + 1);
                w.append(command, i + 1, end);
                i = end;
                any = true;
            } else if (c == '"') {
                int end = i + 1;
                while (command.charAt(end) != '"') {
                    if (command.charAt(end) == '\\') {
                        end++;
                    }
                    end++;
                }
                w.append(command.substring(i + 1, end).replaceAll("\\\\(.)", "$1"));
                i = end;
                any = true;
            } else if (c == '\\' && i + 1 < command.length()) {
                w.append(command.charAt(++i));
                any = true;
            } else if (Character.isWhitespace(c)) {
                if (any) {
                    out.add(w.toString());
                    w.setLength(0);
                    any = false;
                }
            } else {
                w.append(c);
                any = true;
            }
        }
        if (any) {
            out.add(w.toString());
        }
        return out;
    }
}
