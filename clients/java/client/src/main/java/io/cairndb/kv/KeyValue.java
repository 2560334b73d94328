package io.cairndb.kv;

/** A key and a value: one record for {@link KVStore#putMany}. */
public class KeyValue {
  private final Key key;
  private final Value value;

  public KeyValue(Key key, Value value) {
    if (key == null || value == null) {
      throw new IllegalArgumentException("a KeyValue needs a key and a value");
    }
    this.key = key;
    this.value = value;
  }

  public Key getKey() {
    return key;
  }

  public Value getValue() {
    return value;
  }

  @Override
  public String toString() {
    return "KeyValue(" + key + ", " + value + ")";
  }
}
