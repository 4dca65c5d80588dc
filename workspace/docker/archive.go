package docker

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// copyIn copies the engine's root (an empty directory when it has none) into the
// container id at the same absolute path, owned by user (as the container
// runs it; "" is root), with the archive API. Regular files,
// directories and symbolic links are copied (links as links, never
// followed); sockets, FIFOs and devices are skipped. The parents of the
// path that the image lacks are created owned by root, mode 0755.
func (e *Engine) copyIn(ctx context.Context, id, user string) error {
	uid, gid, err := e.owner(ctx, id, user)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTree(pw, e.root, strings.TrimPrefix(e.dir, "/"), uid, gid)) }()
	_, err = e.cli.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: "/", Content: pr})
	pr.CloseWithError(errors.New("docker: copy ended"))
	if err != nil {
		return fmt.Errorf("docker: copy %s into the container: %w", e.root, err)
	}
	return nil
}

// writeTree writes the tree at root as a tar stream whose names start with
// prefix (the root's path without its leading slash), every entry owned by
// uid:gid. Files linked to one another (one inode) are written once and
// then as hard links to the first name.
func writeTree(w io.Writer, root, prefix string, uid, gid int) error {
	tw := tar.NewWriter(w)
	seen := map[[2]uint64]string{} // the first name of each inode with links
	if root == "" {
		h := &tar.Header{Typeflag: tar.TypeDir, Name: prefix + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: time.Now(), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		return tw.Close()
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		link := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir(), fi.Mode().IsRegular():
		default:
			return nil // sockets, FIFOs, devices
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = name
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = uid, gid, "", ""
		h.Format = tar.FormatPAX
		if key, ok := linkKey(fi); ok && fi.Mode().IsRegular() {
			if first, dup := seen[key]; dup {
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
				return tw.WriteHeader(h)
			}
			seen[key] = name
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.CopyN(tw, f, h.Size); err != nil {
			return fmt.Errorf("%s changed while it was copied: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// owner is resolveUser's answer for user, cached for the engine's image
// (containers are created from its ID, so its /etc/passwd and /etc/group
// are the same in all of them): the engine's first isolated workspace reads
// them, the next ones do not.
func (e *Engine) owner(ctx context.Context, id, user string) (uid, gid int, err error) {
	e.ownersMu.Lock()
	ids, ok := e.owners[user]
	e.ownersMu.Unlock()
	if ok {
		return ids[0], ids[1], nil
	}
	if uid, gid, err = e.resolveUser(ctx, id, user); err != nil {
		return 0, 0, err
	}
	if e.imageID != "" {
		e.ownersMu.Lock()
		if e.owners == nil {
			e.owners = make(map[string][2]int)
		}
		e.owners[user] = [2]int{uid, gid}
		e.ownersMu.Unlock()
	}
	return uid, gid, nil
}

// resolveUser returns the numeric uid and gid of user ("name", "uid",
// "name:group", "uid:gid"; "" is root) in the container id, reading its
// /etc/passwd and /etc/group, as the runtime resolves it when it starts a
// process.
func (e *Engine) resolveUser(ctx context.Context, id, user string) (uid, gid int, err error) {
	name, group, hasGroup := strings.Cut(user, ":")
	if name == "" {
		name = "0"
	}
	// Numeric ids need no look-up, and root's group is root's: the
	// runtime reads /etc/passwd only for a name or a uid's primary group.
	if u, err := strconv.Atoi(name); err == nil && (hasGroup || user == "") {
		if !hasGroup {
			return u, 0, nil
		}
		if g, err := strconv.Atoi(group); err == nil {
			return u, g, nil
		}
	}
	passwd, err := e.readFile(ctx, id, "/etc/passwd")
	if err != nil {
		return 0, 0, err
	}
	uid, gid = -1, 0
	if n, err := strconv.Atoi(name); err == nil {
		uid = n
	}
	for _, f := range colonRecords(passwd) {
		if len(f) < 4 || (f[0] != name && f[2] != name) {
			continue
		}
		if u, err := strconv.Atoi(f[2]); err == nil {
			uid = u
			if g, err := strconv.Atoi(f[3]); err == nil {
				gid = g
			}
			break
		}
	}
	if uid < 0 {
		return 0, 0, fmt.Errorf("docker: user %q is not in the image's /etc/passwd; give a numeric uid", name)
	}
	if !hasGroup {
		return uid, gid, nil
	}
	if n, err := strconv.Atoi(group); err == nil {
		return uid, n, nil
	}
	groups, err := e.readFile(ctx, id, "/etc/group")
	if err != nil {
		return 0, 0, err
	}
	for _, f := range colonRecords(groups) {
		if len(f) >= 3 && f[0] == group {
			if g, err := strconv.Atoi(f[2]); err == nil {
				return uid, g, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("docker: group %q is not in the image's /etc/group; give a numeric gid", group)
}

// maxAccountFile bounds how much of /etc/passwd or /etc/group is read.
const maxAccountFile = 1 << 20

// readFile returns the regular file p of the container id ("" when the
// image lacks it).
func (e *Engine) readFile(ctx context.Context, id, p string) (string, error) {
	r, err := e.cli.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: p})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("docker: read %s in the container: %w", p, err)
	}
	defer r.Content.Close()
	tr := tar.NewReader(r.Content)
	h, err := tr.Next()
	if err != nil {
		return "", fmt.Errorf("docker: read %s in the container: %w", p, err)
	}
	if h.Typeflag != tar.TypeReg {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(tr, maxAccountFile))
	if err != nil {
		return "", fmt.Errorf("docker: read %s in the container: %w", p, err)
	}
	return string(b), nil
}

// colonRecords splits an /etc/passwd-style file into its fields.
func colonRecords(s string) [][]string {
	var out [][]string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}
