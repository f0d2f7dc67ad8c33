package dev.polyfn.internal.saved;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.polyfn.internal.Native;
import dev.polyfn.internal.flow.Regions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.tensorflow.proto.AttrValue;
import org.tensorflow.proto.FunctionDef;
import org.tensorflow.proto.FunctionDefLibrary;
import org.tensorflow.proto.NameAttrList;
import org.tensorflow.proto.NodeDef;

/**
 * The functions a concrete function's operations refer to by name (the branches of {@code
 * If}/{@code While} built by {@code Flow}, nested to any depth), which must travel with it: a
 * FunctionDef alone does not run where they are missing. Exporting collects those reachable from
 * the main function through its nodes' function-valued attributes; restoring gives each a fresh
 * name and rewrites every reference to it.
 *
 * <p>Why rename: a saved name was unique in the process that traced it, but in this process the
 * same entry can be restored twice (two functions with one trace cache key, a SavedModel loaded
 * twice), and each restored function removes its library functions when closed, so sharing one
 * registration between two owners would break the survivor.
 */
public final class FunctionLibrary {
  private FunctionLibrary() {}

  /** A main function and its library, ready for {@code Native.restoreConcrete}. */
  public record Restorable(byte[] main, byte[] library) {}

  /**
   * The library functions concrete function {@code id} of the native function at {@code function}
   * refers to, transitively, in a stable order (discovery order).
   */
  public static List<FunctionDef> exported(long function, int id, FunctionDef main) {
    byte[] bytes = Native.exportLibrary(function, id);
    Map<String, FunctionDef> all = new HashMap<>();
    try {
      FunctionDefLibrary.parseFrom(bytes).getFunctionList().forEach(d -> all.put(d.getSignature().getName(), d));
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("TensorFlow exported an unreadable function library: " + e.getMessage(), e);
    }
    try {
      return reachable(main, all, "the function's library");
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * The functions of {@code available} that {@code main} refers to, directly or through one
   * another; an IllegalArgumentException naming the first referenced function {@code where} does
   * not hold.
   */
  public static List<FunctionDef> reachable(FunctionDef main, Map<String, FunctionDef> available, String where) {
    String mainName = main.getSignature().getName();
    Map<String, FunctionDef> found = new LinkedHashMap<>();
    Map<String, Set<String>> calls = new HashMap<>();
    Deque<FunctionDef> todo = new ArrayDeque<>();
    todo.add(main);
    while (!todo.isEmpty()) {
      FunctionDef d = todo.poll();
      String from = d.getSignature().getName();
      Set<String> callees = calls.computeIfAbsent(from, k -> new LinkedHashSet<>());
      references(d, op -> op.equals(mainName) || available.keySet().contains(op), name -> {
        callees.add(name);
        if (name.equals(mainName) || found.containsKey(name)) {
          return;
        }
        FunctionDef def = available.get(name);
        if (def == null) {
          throw new IllegalArgumentException("function " + from + " refers to function " + name + ", which "
              + where + " does not hold");
        }
        found.put(name, def);
        todo.add(def);
      });
    }
    refuseCycles(mainName, calls);
    return new ArrayList<>(found.values());
  }

  /**
   * Refuses a function that reaches itself: TensorFlow instantiates a function with every
   * function it calls, whichever branch runs, so a cycle (a branch whose inner If calls that
   * branch) makes the first call expand it forever, in native code, growing without bound.
   */
  private static void refuseCycles(String main, Map<String, Set<String>> calls) {
    Map<String, Integer> state = new HashMap<>(); // 1: on the current path, 2: done
    Deque<String> path = new ArrayDeque<>();
    Deque<java.util.Iterator<String>> next = new ArrayDeque<>();
    path.push(main);
    next.push(calls.getOrDefault(main, Set.of()).iterator());
    state.put(main, 1);
    while (!path.isEmpty()) {
      java.util.Iterator<String> it = next.peek();
      if (!it.hasNext()) {
        state.put(path.pop(), 2);
        next.pop();
        continue;
      }
      String callee = it.next();
      Integer s = state.get(callee);
      if (s != null && s == 1) {
        List<String> cycle = new ArrayList<>(path);
        java.util.Collections.reverse(cycle);
        cycle = new ArrayList<>(cycle.subList(cycle.indexOf(callee), cycle.size()));
        cycle.add(callee);
        throw new IllegalArgumentException("its functions call one another in a cycle (" + String.join(" -> ", cycle)
            + "), which TensorFlow would expand forever");
      }
      if (s == null) {
        state.put(callee, 1);
        path.push(callee);
        next.push(calls.getOrDefault(callee, Set.of()).iterator());
      }
    }
  }

  /**
   * {@code main} and {@code library} with every library function under a fresh process-unique
   * name and every reference to one (in {@code main} and in the library itself) rewritten.
   */
  public static Restorable forRestore(FunctionDef main, List<FunctionDef> library) {
    Map<String, String> names = new HashMap<>();
    for (FunctionDef d : library) {
      names.put(d.getSignature().getName(), Regions.uniqueName("restored"));
    }
    FunctionDefLibrary.Builder lib = FunctionDefLibrary.newBuilder();
    for (FunctionDef d : library) {
      FunctionDef.Builder b = rewrite(d, names).toBuilder();
      b.getSignatureBuilder().setName(names.get(d.getSignature().getName()));
      lib.addFunction(b);
    }
    return new Restorable(rewrite(main, names).toByteArray(), lib.build().toByteArray());
  }

  /** Calls {@code sink} with each function name {@code d}'s nodes refer to (op types only if in {@code library}). */
  private static void references(FunctionDef d, java.util.function.Predicate<String> library, Consumer<String> sink) {
    for (NodeDef n : d.getNodeDefList()) {
      if (library.test(n.getOp())) {
        sink.accept(n.getOp()); // a direct call: the op type is the function's name
      }
      n.getAttrMap().values().forEach(v -> funcs(v, sink));
    }
  }

  private static void funcs(AttrValue v, Consumer<String> sink) {
    if (v.hasFunc()) {
      sink.accept(v.getFunc().getName());
      v.getFunc().getAttrMap().values().forEach(a -> funcs(a, sink));
    }
    if (v.hasList()) {
      for (NameAttrList f : v.getList().getFuncList()) {
        sink.accept(f.getName());
        f.getAttrMap().values().forEach(a -> funcs(a, sink));
      }
    }
  }

  private static FunctionDef rewrite(FunctionDef d, Map<String, String> names) {
    FunctionDef.Builder b = d.toBuilder();
    for (NodeDef.Builder n : b.getNodeDefBuilderList()) {
      if (names.containsKey(n.getOp())) {
        n.setOp(names.get(n.getOp()));
      }
      Map<String, AttrValue> attrs = new LinkedHashMap<>(n.getAttrMap());
      attrs.replaceAll((k, v) -> rewrite(v, names));
      n.putAllAttr(attrs);
    }
    return b.build();
  }

  private static AttrValue rewrite(AttrValue v, Map<String, String> names) {
    if (v.hasFunc()) {
      return v.toBuilder().setFunc(rewrite(v.getFunc(), names)).build();
    }
    if (v.hasList() && v.getList().getFuncCount() > 0) {
      AttrValue.ListValue.Builder list = v.getList().toBuilder();
      for (int i = 0; i < list.getFuncCount(); i++) {
        list.setFunc(i, rewrite(list.getFunc(i), names));
      }
      return v.toBuilder().setList(list).build();
    }
    return v;
  }

  private static NameAttrList rewrite(NameAttrList f, Map<String, String> names) {
    NameAttrList.Builder b = f.toBuilder().setName(names.getOrDefault(f.getName(), f.getName()));
    Map<String, AttrValue> attrs = new LinkedHashMap<>(f.getAttrMap());
    attrs.replaceAll((k, v) -> rewrite(v, names));
    return b.putAllAttr(attrs).build();
  }
}
