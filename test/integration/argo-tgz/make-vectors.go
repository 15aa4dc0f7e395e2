// Writes the expected archives for test/integration/argo-artifacts.test.ts: the folder made by tree.ts archived
// with Go's archive/tar and compress/gzip as Argo's util/archive TarGzToWriter does it (tar.FileInfoHeader, the name
// BASE/RELATIVE, filepath.Walk's order, gzip.DefaultCompression). Run as root, in a folder made by tree.ts:
//   go run make-vectors.go ROOT OUTDIR    (writes OUTDIR/out.tar, OUTDIR/single.tar: the archives, uncompressed,
//   and OUTDIR/gzip-header.bin: the 10-byte gzip header Go writes)
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func header(info os.FileInfo, path, name string) *tar.Header {
	link := ""
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		must(err)
		link = target
	}
	h, err := tar.FileInfoHeader(info, link)
	must(err)
	h.Name = name
	return h
}

func archiveFolder(root string, w io.Writer) {
	tw := tar.NewWriter(w)
	base := filepath.Base(root)
	must(filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		must(err)
		rel, err := filepath.Rel(root, path)
		must(err)
		must(tw.WriteHeader(header(info, path, filepath.ToSlash(filepath.Join(base, rel)))))
		if info.Mode().IsRegular() {
			f, err := os.Open(path)
			must(err)
			_, err = io.Copy(tw, f)
			must(err)
			must(f.Close())
		}
		return nil
	}))
	must(tw.Close())
}

func archiveFile(path string, w io.Writer) {
	tw := tar.NewWriter(w)
	f, err := os.Open(path)
	must(err)
	info, err := f.Stat()
	must(err)
	must(tw.WriteHeader(header(info, path, filepath.Base(path))))
	_, err = io.Copy(tw, f)
	must(err)
	must(tw.Close())
}

func main() {
	root, out := os.Args[1], os.Args[2]
	var folder, single, gz bytes.Buffer
	archiveFolder(filepath.Join(root, "out"), &folder)
	archiveFile(filepath.Join(root, "single.txt"), &single)
	zw, err := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	must(err)
	must(zw.Close())
	must(os.WriteFile(filepath.Join(out, "out.tar"), folder.Bytes(), 0o644))
	must(os.WriteFile(filepath.Join(out, "single.tar"), single.Bytes(), 0o644))
	must(os.WriteFile(filepath.Join(out, "gzip-header.bin"), gz.Bytes()[:10], 0o644))
}
