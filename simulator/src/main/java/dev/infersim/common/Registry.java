package dev.infersim.common;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Things made by name from a flag ({@code --router}, {@code --scheduling-policy}, {@code --autoscaler}): each name is
 * declared once, with its factory and any aliases, and the list a help text or an error shows is drawn from the same
 * declarations (as Caffeine's simulator registers its policies). Names are matched case-insensitively, an underscore
 * standing for a dash.
 *
 * @param <A> what a factory is given (a seed, a spec)
 * @param <T> what it makes
 */
public final class Registry<A, T> {
    private final String flag;
    private final String kind;
    private final List<String> names = new ArrayList<>();
    private final Map<String, Function<A, T>> factories = new HashMap<>();

    /** An empty registry for {@code flag}, whose errors call its entries {@code kind} ("router"). */
    public Registry(String flag, String kind) {
        this.flag = flag;
        this.kind = kind;
    }

    /** Declares {@code name} (and {@code aliases}, accepted but not listed), made by {@code factory}. */
    public Registry<A, T> register(String name, Function<A, T> factory, String... aliases) {
        names.add(name);
        for (String n : concat(name, aliases)) {
            if (factories.putIfAbsent(key(n), factory) != null) {
                throw new IllegalStateException(flag + ": '" + n + "' declared twice");
            }
        }
        return this;
    }

    /** The declared names, in declaration order (aliases left out). */
    public List<String> names() {
        return List.copyOf(names);
    }

    /** A new one by name; a {@link ConfigException} naming the flag and the known names for another. */
    public T create(String name, A argument) {
        Function<A, T> factory = factories.get(key(name));
        if (factory == null) {
            throw new ConfigException(flag + ": unknown " + kind + " '" + name + "'; use one of " + String.join(", ", names));
        }
        return factory.apply(argument);
    }

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static List<String> concat(String first, String[] rest) {
        List<String> all = new ArrayList<>(List.of(rest));
        all.add(0, first);
        return all;
    }
}
