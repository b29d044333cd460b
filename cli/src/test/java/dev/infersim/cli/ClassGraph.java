package dev.infersim.cli;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaFieldAccess;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/**
 * What the structure tests measure on the compiled classes (ArchUnit's import): classes per package, the class-level
 * cycle groups, and the rules on packages taken one by one (a package alone, not the ones under it).
 */
final class ClassGraph {
    private ClassGraph() {
    }

    /**
     * The main code of every module: test classes left out, whether in a module's test-classes folder or, as Maven's
     * reactor hands them to cli's tests in {@code mvn verify}, in its {@code -tests.jar}.
     */
    static JavaClasses mainClasses() {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("dev.infersim");
    }

    /** Whether {@code c} is in package {@code prefix} or below it. */
    static boolean under(JavaClass c, String prefix) {
        return c.getPackageName().equals(prefix) || c.getPackageName().startsWith(prefix + ".");
    }

    /** The class's outermost enclosing class: nested and anonymous classes count as part of it. */
    static JavaClass topLevel(JavaClass c) {
        JavaClass t = c.getBaseComponentType();
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** The packages holding more than {@code limit} top-level classes (package-info and nested classes not counted). */
    static Map<String, Long> packagesOver(JavaClasses classes, int limit) {
        Map<String, Long> counts = new TreeMap<>();
        classes.stream().filter(JavaClass::isTopLevelClass).filter(c -> !c.getSimpleName().equals("package-info"))
                .forEach(c -> counts.merge(c.getPackageName(), 1L, Long::sum));
        counts.values().removeIf(n -> n <= limit);
        return counts;
    }

    /**
     * The class-level cycle groups under {@code prefix}: the strongly connected components of two or more top-level
     * classes in the graph of their dependencies (Tarjan 1972; nested classes folded into theirs), each sorted, the
     * largest first.
     */
    static List<List<String>> cycleGroups(JavaClasses classes, String prefix) {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (JavaClass c : classes) {
            if (!under(c, prefix)) {
                continue;
            }
            String from = topLevel(c).getName();
            Set<String> to = uses.computeIfAbsent(from, k -> new TreeSet<>());
            c.getDirectDependenciesFromSelf().forEach(d -> {
                JavaClass target = topLevel(d.getTargetClass());
                if (under(target, prefix) && !target.getName().equals(from)) {
                    to.add(target.getName());
                }
            });
        }
        return new Tarjan(uses).groups();
    }

    /** Classes of exactly package {@code from} use, of the packages under {@code family}, only {@code from} and {@code allowed}. */
    static ArchRule usesOnlyWithin(String family, String from, List<String> allowed) {
        List<String> packages = new ArrayList<>();
        packages.add(from);
        packages.addAll(allowed);
        return classes().that().resideInAPackage(from)
                .should().onlyDependOnClassesThat(JavaClass.Predicates.resideOutsideOfPackage(family + "..")
                        .or(JavaClass.Predicates.resideInAnyPackage(packages.toArray(String[]::new))))
                .because(from + " may use, of " + family + "'s packages, only " + allowed);
    }

    /**
     * Classes under {@code family} read and write no instance field of another class of the project (nested classes
     * count as part of theirs; constants are static): what they share, they share through methods, so that no class
     * leans on another's mutable state.
     */
    static ArchRule touchOnlyTheirOwnFields(String family) {
        return classes().that().resideInAPackage(family + "..").should(new ArchCondition<>(
                "touch no instance field of another class") {
            @Override
            public void check(JavaClass c, ConditionEvents events) {
                for (JavaFieldAccess a : c.getFieldAccessesFromSelf()) {
                    JavaClass owner = a.getTargetOwner();
                    boolean instance = a.getTarget().resolveMember()
                            .map(f -> !f.getModifiers().contains(JavaModifier.STATIC)).orElse(true);
                    if (instance && under(owner, "dev.infersim") && !topLevel(owner).equals(topLevel(c))) {
                        events.add(SimpleConditionEvent.violated(a, a.getDescription()));
                    }
                }
            }
        });
    }

    /** No cycle between the packages (each one exactly, the family's top included) under {@code families}. */
    static ArchRule noCycleBetweenPackagesUnder(String... families) {
        return SlicesRuleDefinition.slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                for (String f : families) {
                    if (under(c, f)) {
                        return SliceIdentifier.of(c.getPackageName());
                    }
                }
                return SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "the packages under " + List.of(families);
            }
        }).should().beFreeOfCycles();
    }

    /** Tarjan's strongly connected components (recursive: the largest graph here has about 110 classes). */
    private static final class Tarjan {
        private final Map<String, Set<String>> edges;
        private final Map<String, Integer> index = new HashMap<>();
        private final Map<String, Integer> low = new HashMap<>();
        private final Deque<String> stack = new ArrayDeque<>();
        private final Set<String> onStack = new HashSet<>();
        private final List<List<String>> groups = new ArrayList<>();

        Tarjan(Map<String, Set<String>> edges) {
            this.edges = edges;
        }

        List<List<String>> groups() {
            edges.keySet().forEach(v -> {
                if (!index.containsKey(v)) {
                    visit(v);
                }
            });
            groups.sort((a, b) -> Integer.compare(b.size(), a.size()));
            return groups;
        }

        private void visit(String v) {
            index.put(v, index.size());
            low.put(v, index.get(v));
            stack.push(v);
            onStack.add(v);
            for (String w : edges.getOrDefault(v, Set.of())) {
                if (!index.containsKey(w)) {
                    visit(w);
                    low.put(v, Math.min(low.get(v), low.get(w)));
                } else if (onStack.contains(w)) {
                    low.put(v, Math.min(low.get(v), index.get(w)));
                }
            }
            if (low.get(v).equals(index.get(v))) {
                List<String> group = new ArrayList<>();
                String w;
                do {
                    w = stack.pop();
                    onStack.remove(w);
                    group.add(w);
                } while (!w.equals(v));
                if (group.size() > 1) {
                    group.sort(null);
                    groups.add(group);
                }
            }
        }
    }
}
