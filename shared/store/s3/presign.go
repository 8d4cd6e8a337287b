package s3

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PresignPut returns a URL through which anyone holding it may PUT the
// object at the clean vault path p until ttl has passed: an upload that
// does not go through the server (ingest_file's presigned upload).
func (s *Store) PresignPut(ctx context.Context, p string, ttl time.Duration) (string, error) {
	p, err := clean(ctx, p)
	if err != nil {
		return "", err
	}
	req, err := s3.NewPresignClient(s.client).PresignPutObject(ctx,
		&s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.Key(p))},
		s3.WithPresignExpires(ttl))
	if err != nil {
		return "", err
	}
	return req.URL, nil
}
