package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The shared semantics table (api/testdata/cases.json) through the Java client against a real cairn
 * lite: the same outcomes, versions and error kinds as the Go client, HTTP/JSON and Python.
 */
class CasesTest {
  private static KVStore store;
  private static long maxValueBytes;

  @BeforeAll
  static void open() throws Exception {
    Procs.Lite lite = Procs.lite();
    store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, lite.addr));
    // The limit comes from the node, as StoreInfo gives it (over HTTP here).
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://" + lite.addr + "/v1/store")).build(),
        HttpResponse.BodyHandlers.ofString());
    maxValueBytes = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("limits")
        .get("max_value_bytes").getAsLong();
  }

  @AfterAll
  static void close() {
    store.close();
  }

  @TestFactory
  Stream<DynamicTest> sharedCases() throws IOException {
    Path p = Path.of(System.getProperty("user.dir")).resolve("../../../api/testdata/cases.json").normalize();
    JsonArray cases = JsonParser.parseString(Files.readString(p)).getAsJsonObject().getAsJsonArray("cases");
    assertTrue(cases.size() > 10, "too few cases");
    List<DynamicTest> tests = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      JsonObject c = cases.get(i).getAsJsonObject();
      String tag = "java" + i + "_" + ProcessHandle.current().pid() + "_";
      tests.add(DynamicTest.dynamicTest(c.get("name").getAsString(), () -> {
        Runner r = new Runner(tag);
        JsonArray steps = c.getAsJsonArray("steps");
        for (int j = 0; j < steps.size(); j++) {
          r.run(j, steps.get(j).getAsJsonObject());
        }
      }));
    }
    return tests.stream();
  }

  private static String str(JsonObject o, String name) {
    JsonElement e = o.get(name);
    return e == null ? null : e.getAsString();
  }

  private static final class Runner {
    private final String tag;
    private final Map<String, Version> versions = new HashMap<>();

    Runner(String tag) {
      this.tag = tag;
    }

    String tagged(String key) {
      return key.length() > 1 && key.charAt(0) == '/' ? "/" + tag + key.substring(1) : key;
    }

    Key key(String s) {
      return Key.fromString(tagged(s));
    }

    Value value(JsonObject st) {
      String vb = str(st, "value_bytes");
      if (vb == null) {
        return Value.createValue(str(st, "value").getBytes(UTF_8));
      }
      long n = vb.equals("max_value_bytes") ? maxValueBytes : maxValueBytes + 1;
      assertTrue(vb.startsWith("max_value_bytes"), "unknown value_bytes " + vb);
      return Value.createValue("x".repeat((int) n).getBytes(UTF_8));
    }

    Version match(String name) {
      Version v = versions.get(name);
      assertNotNull(v, "version " + name + " was not saved");
      return v;
    }

    Operation op(JsonObject st) {
      OperationFactory f = store.getOperationFactory();
      Key k = key(str(st, "key"));
      String cond = str(st, "if");
      boolean abort = st.has("abort_if_unsuccessful") && st.get("abort_if_unsuccessful").getAsBoolean();
      ReturnValueVersion.Choice none = ReturnValueVersion.Choice.NONE;
      if (str(st, "op").equals("delete")) {
        return "version".equals(cond) ? f.createDeleteIfVersion(k, match(str(st, "version")), none, abort)
            : f.createDelete(k, none, abort);
      }
      Value v = value(st);
      if (cond == null) {
        return f.createPut(k, v, none, abort);
      }
      switch (cond) {
        case "absent":
          return f.createPutIfAbsent(k, v, none, abort);
        case "present":
          return f.createPutIfPresent(k, v, none, abort);
        default:
          return f.createPutIfVersion(k, v, match(str(st, "version")), none, abort);
      }
    }

    Depth depth(JsonObject st) {
      String d = str(st, "depth");
      return d == null ? Depth.PARENT_AND_DESCENDANTS : Depth.valueOf(d.toUpperCase());
    }

    KeyRange range(JsonObject st) {
      if (!st.has("range")) {
        return null;
      }
      JsonObject r = st.getAsJsonObject("range");
      if (r.has("prefix")) {
        return new KeyRange(str(r, "prefix"));
      }
      boolean se = r.has("start_exclusive") && r.get("start_exclusive").getAsBoolean();
      boolean ee = r.has("end_exclusive") && r.get("end_exclusive").getAsBoolean();
      return new KeyRange(str(r, "start"), !se, str(r, "end"), !ee);
    }

    void run(int i, JsonObject st) throws Exception {
      JsonObject want = st.getAsJsonObject("expect");
      String where = "step " + i + " (" + str(st, "op") + " " + (st.has("key") ? str(st, "key") : str(st, "parent")) + ")";
      Object got;
      try {
        got = exec(st);
      } catch (OperationExecutionException e) {
        assertTrue(want.has("aborted_at"), where + ": aborted at " + e.getFailedOperationIndex() + ", want " + want);
        assertEquals(want.get("aborted_at").getAsInt(), e.getFailedOperationIndex(), where + ": aborted at");
        return;
      } catch (FaultException e) {
        assertEquals(str(want, "error"), e.getKind(), where + ": error " + e.getMessage());
        return;
      } catch (InvalidArgumentException e) {
        assertEquals(str(want, "error"), e.getKind(), where + ": error " + e.getMessage());
        return;
      }
      if (want.has("error") || want.has("aborted_at")) {
        fail(where + ": succeeded (" + got + "), want " + want);
      }
      check(where, st, want, got);
    }

    Object exec(JsonObject st) throws Exception {
      switch (str(st, "op")) {
        case "put": {
          Key k = key(str(st, "key"));
          String cond = str(st, "if");
          Version v = cond == null ? store.put(k, value(st))
              : cond.equals("absent") ? store.putIfAbsent(k, value(st))
              : cond.equals("present") ? store.putIfPresent(k, value(st))
              : store.putIfVersion(k, value(st), match(str(st, "version")));
          return v;
        }
        case "delete": {
          Key k = key(str(st, "key"));
          return "version".equals(str(st, "if")) ? store.deleteIfVersion(k, match(str(st, "version"))) : store.delete(k);
        }
        case "get":
          return store.get(key(str(st, "key")));
        case "multi_get":
          return store.multiGet(key(str(st, "parent")), range(st), depth(st));
        case "multi_delete":
          return store.multiDelete(key(str(st, "parent")), range(st), depth(st));
        case "execute": {
          List<Operation> ops = new ArrayList<>();
          for (JsonElement o : st.getAsJsonArray("ops")) {
            ops.add(op(o.getAsJsonObject()));
          }
          List<Boolean> done = new ArrayList<>();
          for (OperationResult r : store.execute(ops)) {
            done.add(r.getSuccess());
          }
          return done;
        }
        default:
          throw new AssertionError("unknown op " + str(st, "op"));
      }
    }

    @SuppressWarnings("unchecked")
    void check(String where, JsonObject st, JsonObject want, Object got) {
      switch (str(st, "op")) {
        case "put": {
          boolean done = got != null;
          assertEquals(want.get("done").getAsBoolean(), done, where + ": done");
          if (st.has("save")) {
            versions.put(str(st, "save"), (Version) got);
          }
          break;
        }
        case "delete":
          assertEquals(want.get("done").getAsBoolean(), got, where + ": done");
          break;
        case "get": {
          ValueVersion vv = (ValueVersion) got;
          if (want.has("missing")) {
            assertNull(vv, where + ": want missing");
            break;
          }
          assertNotNull(vv, where + ": missing");
          if (want.has("value")) {
            assertEquals(str(want, "value"), new String(vv.getValue().getValue(), UTF_8), where + ": value");
          }
          if (want.has("version")) {
            assertEquals(match(str(want, "version")), vv.getVersion(), where + ": version");
          }
          break;
        }
        case "multi_get": {
          Map<Key, ValueVersion> m = (Map<Key, ValueVersion>) got;
          List<String> keys = new ArrayList<>();
          List<String> values = new ArrayList<>();
          m.forEach((k, vv) -> {
            keys.add(k.toString());
            values.add(new String(vv.getValue().getValue(), UTF_8));
          });
          List<String> wantKeys = new ArrayList<>();
          want.getAsJsonArray("keys").forEach(e -> wantKeys.add(tagged(e.getAsString())));
          assertEquals(wantKeys, keys, where + ": keys");
          if (want.has("values")) {
            List<String> wantValues = new ArrayList<>();
            want.getAsJsonArray("values").forEach(e -> wantValues.add(e.getAsString()));
            assertEquals(wantValues, values, where + ": values");
          }
          break;
        }
        case "multi_delete":
          assertEquals(want.get("deleted").getAsInt(), (int) (Integer) got, where + ": deleted");
          break;
        case "execute": {
          List<Boolean> wantDone = new ArrayList<>();
          want.getAsJsonArray("done").forEach(e -> wantDone.add(e.getAsBoolean()));
          assertEquals(wantDone, got, where + ": done");
          break;
        }
        default:
          throw new AssertionError("unknown op");
      }
    }
  }
}
