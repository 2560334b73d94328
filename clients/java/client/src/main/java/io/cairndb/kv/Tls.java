package io.cairndb.kv;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/** TLS for the call sockets of a secure store: TLS 1.3, the nodes verified against the store CA alone. */
final class Tls {
  private Tls() {}

  /** An SSLSocketFactory that trusts the certificates in caFile (PEM) and nothing else. */
  static SSLSocketFactory socketFactory(String caFile) {
    try (InputStream in = new FileInputStream(caFile)) {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca" + i++, c);
      }
      if (i == 0) {
        throw new IllegalArgumentException("the store CA " + caFile + ": no certificate in it");
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLSv1.3");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx.getSocketFactory();
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("the store CA " + caFile + ": " + e.getMessage(), e);
    }
  }
}
