package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"
)

// ErrNotRestorable is returned when completed checkpoints exist but none of
// the ones examined can be restored. It matches ErrNotFound under errors.Is:
// for a restore, there is no checkpoint.
var ErrNotRestorable error = notRestorable{}

type notRestorable struct{}

func (notRestorable) Error() string        { return "no restorable checkpoint found" }
func (notRestorable) Is(target error) bool { return target == ErrNotFound }

// maxReportedMissing bounds the missing files a Skipped reason names.
const maxReportedMissing = 3

// restorable reads the _metadata of the checkpoint or savepoint at snapshot
// and confirms that every state file it references is in the store. Only files
// within root (the directory the look-up was asked about, which the caller
// may have checked against an allowed prefix) are looked up: a _metadata that
// names a file elsewhere cannot make the locator probe other objects, and the
// checkpoint is taken unverified (a changelog's files, in dstl.dfs.base-path,
// are elsewhere by design). why is
// empty when it is restorable, and says what is wrong otherwise; unverified
// is set when it could not be confirmed either way (it is then taken as
// restorable: Flink will say). err is a store failure (retriable).
func (s *Store) restorable(ctx context.Context, snapshot string, root Location) (why, unverified string, err error) {
	loc, err := ParseLocation(snapshot)
	if err != nil {
		return "", "", err
	}
	data, found, err := s.readMetadata(ctx, loc.Join(MetadataFile))
	switch {
	case err != nil:
		return "", "", err
	case !found:
		return "its _metadata is gone", "", nil
	}
	md, err := ParseMetadata(data, loc.String())
	switch {
	case errors.Is(err, ErrUnsupportedMetadata):
		return "", err.Error(), nil
	case err != nil:
		return err.Error(), "", nil
	}
	if limit := cmp.Or(s.MaxStateFiles, DefaultMaxStateFiles); len(md.Files) > limit {
		return "", fmt.Sprintf("_metadata references %d state files, more than the %d confirmed per checkpoint", len(md.Files), limit), nil
	}
	files := make([]stateObject, 0, len(md.Files))
	for _, f := range md.Files {
		fl, err := ParseLocation(flinkPathURI(f.Path))
		if err != nil {
			return "", fmt.Sprintf("state file %s: %v", f.Path, err), nil
		}
		if !fl.Within(root) {
			return "", fmt.Sprintf("state file %s is outside %s, where the checkpoint was looked up", f.Path, root), nil
		}
		files = append(files, stateObject{loc: fl, size: f.Size})
	}
	var missing []string
	if loc.IsS3() {
		missing, err = s.missingS3(ctx, files)
	} else {
		missing, err = missingFiles(files)
	}
	if err != nil || len(missing) == 0 {
		return "", "", err
	}
	shown := missing[:min(len(missing), maxReportedMissing)]
	more := ""
	if len(missing) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
	}
	return fmt.Sprintf("%d of the %d state files its _metadata references are not in the store: %s%s",
		len(missing), len(files), strings.Join(shown, ", "), more), "", nil
}

// flinkPathURI turns a path as Flink writes it into a URI ParseLocation
// reads: a path without a scheme is a local one.
func flinkPathURI(p string) string {
	if strings.HasPrefix(p, "/") {
		return "file://" + p
	}
	return p
}

// stateObject is a referenced state file and the bytes its handle reads.
type stateObject struct {
	loc  Location
	size int64
}

// check returns "" when an object of length n satisfies the handle, or what
// is wrong.
func (o stateObject) check(found bool, n int64) string {
	switch {
	case !found:
		return o.loc.String()
	case o.size > 0 && n < o.size:
		return fmt.Sprintf("%s (%d bytes, the handle reads %d)", o.loc, n, o.size)
	}
	return ""
}

// readMetadata reads a _metadata object or file, at most MaxMetadataBytes.
func (s *Store) readMetadata(ctx context.Context, obj Location) (data []byte, found bool, err error) {
	if !obj.IsS3() {
		f, err := os.Open(obj.Key)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", obj, err)
		}
		defer f.Close()
		data, err = readAllLimited(f, MaxMetadataBytes, obj.String())
		return data, err == nil, err
	}
	out, err := s.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(obj.Bucket), Key: aws.String(obj.Key)})
	var re *awshttp.ResponseError
	var nsk *types.NoSuchKey
	switch {
	case errors.As(err, &nsk) || (errors.As(err, &re) && re.HTTPStatusCode() == 404):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", obj, err)
	}
	defer out.Body.Close()
	data, err = readAllLimited(out.Body, MaxMetadataBytes, obj.String())
	return data, err == nil, err
}

// missingFiles stats local state files.
func missingFiles(files []stateObject) ([]string, error) {
	var missing []string
	for _, f := range files {
		st, err := os.Stat(f.loc.Key)
		found := err == nil && st.Mode().IsRegular()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", f.loc, err)
		}
		var n int64
		if found {
			n = st.Size()
		}
		if m := f.check(found, n); m != "" {
			missing = append(missing, m)
		}
	}
	return missing, nil
}

// missingS3 confirms S3 state files: one listing of a directory holding
// ListThreshold or more of them (1,000 names a request, whatever else the
// directory holds), a HEAD each otherwise, a few requests at a time.
func (s *Store) missingS3(ctx context.Context, files []stateObject) ([]string, error) {
	byDir := map[string][]stateObject{}
	var dirs []string
	for _, f := range files {
		d := path.Dir(f.loc.Key)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], f)
	}
	var (
		mu      sync.Mutex
		missing []string
	)
	report := func(m string) {
		mu.Lock()
		missing = append(missing, m)
		mu.Unlock()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(s.StatConcurrency, DefaultStatConcurrency))
	threshold := cmp.Or(s.ListThreshold, DefaultListThreshold)
	for _, d := range dirs {
		objs := byDir[d]
		if len(objs) >= threshold {
			g.Go(func() error {
				sizes, err := s.listSizes(gctx, objs[0].loc.Bucket, d)
				if err != nil {
					return err
				}
				for _, o := range objs {
					n, found := sizes[o.loc.Key]
					if m := o.check(found, n); m != "" {
						report(m)
					}
				}
				return nil
			})
			continue
		}
		for _, o := range objs {
			g.Go(func() error {
				out, err := s.S3.HeadObject(gctx, &s3.HeadObjectInput{Bucket: aws.String(o.loc.Bucket), Key: aws.String(o.loc.Key)})
				var re *awshttp.ResponseError
				found := true
				switch {
				case errors.As(err, &re) && re.HTTPStatusCode() == 404:
					found = false
				case err != nil:
					return fmt.Errorf("reading %s: %w", o.loc, err)
				}
				var n int64
				if found {
					n = aws.ToInt64(out.ContentLength)
				}
				if m := o.check(found, n); m != "" {
					report(m)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The order of the requests is not the order of the files.
	slices.Sort(missing)
	return missing, nil
}

// listSizes lists the objects directly under dir/ with their sizes.
func (s *Store) listSizes(ctx context.Context, bucket, dir string) (map[string]int64, error) {
	prefix := dir + "/"
	p := s3.NewListObjectsV2Paginator(s.S3, &s3.ListObjectsV2Input{
		Bucket: aws.String(bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/"),
		EncodingType: types.EncodingTypeUrl,
	})
	sizes := map[string]int64{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, obj := range page.Contents {
			key, err := listedName(aws.ToString(obj.Key), page.EncodingType)
			if err != nil {
				return nil, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
			}
			sizes[key] = aws.ToInt64(obj.Size)
		}
	}
	return sizes, nil
}
