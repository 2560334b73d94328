package clustertest

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes every line back until the connection closes.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip sends a line through c and reads it back.
func roundTrip(c net.Conn, line string) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func TestProxyCutAndHeal(t *testing.T) {
	p, err := NewProxy(1, 2, echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, "hello"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	p.Cut()
	// The open connection is closed: reading ends with EOF or a reset.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("read on a cut link succeeded")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a cut link left the connection open")
	}
	// New connections are accepted and closed at once.
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if err := roundTrip(c2, "cut"); err == nil {
			t.Fatal("a new connection carried data while the link was cut")
		}
		c2.Close()
	}

	p.Heal()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := roundTrip(c3, "healed"); err != nil {
		t.Fatalf("after heal: %v", err)
	}
}
