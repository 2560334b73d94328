package io.cairndb.kv;

/** Opens store handles, as {@code oracle.kv.KVStoreFactory}. */
public final class KVStoreFactory {
  private KVStoreFactory() {}

  /**
   * Opens a handle on the store: asks the helper hosts for StoreInfo (the
   * first that answers), checks the store name, and for a replicated store
   * takes its topology to route by. Throws {@link FaultException} when no
   * host answers, and a FIX_INPUT error (kind store_mismatch) when a node
   * serves another store. Close the handle when done.
   */
  public static KVStore getStore(KVStoreConfig config) {
    return StoreImpl.open(config);
  }
}
